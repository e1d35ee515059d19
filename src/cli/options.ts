import { type Command, InvalidArgumentError, Option } from 'commander';
import { SEGMENTATIONS, type Segmentation } from '../core/segment.js';
import { parseShard } from '../jobs/run-job.js';

/** Commander argument parsers with messages that say what was expected. */
export function intOption(name: string, min = Number.MIN_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min} (got "${value}")`);
    return n;
  };
}

export function floatOption(name: string, min = -Infinity, max = Infinity) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}] (got "${value}")`);
    }
    return n;
  };
}

export function choiceOption<T extends string>(name: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${name} must be one of ${choices.join(', ')} (got "${value}")`);
    }
    return value as T;
  };
}

/**
 * `--input <file>`, the one name of an input file across commands, required, with older names
 * kept as hidden aliases (e.g. `--from`, `--labels`) so existing scripts keep working.
 */
export function addInputOption(cmd: Command, description: string, aliases: readonly string[] = []): Command {
  cmd.addOption(new Option('--input <file>', `${description} (required)`));
  for (const alias of aliases)
    cmd.addOption(new Option(`--${alias} <file>`, 'old name of --input').hideHelp());
  cmd.hook('preAction', (_parent, action) => {
    if (action !== cmd) return;
    const opts = cmd.opts<Record<string, string | undefined>>();
    if (opts.input === undefined) {
      const given = aliases.find((a) => opts[a] !== undefined);
      if (given) cmd.setOptionValue('input', opts[given]);
    }
    if (cmd.opts().input === undefined)
      cmd.error("error: required option '--input <file>' not specified", {
        exitCode: 2,
        code: 'commander.missingMandatoryOptionValue',
      });
  });
  return cmd;
}

/**
 * `--segmentation paragraph|tags`: how the policy segments its reasoning — blank-line paragraphs,
 * or self-segmentation with `<chunk>…</chunk>` tags (METHODS §1). Without `defaultValue` the
 * option is undefined when not given (label takes the input file's).
 */
export function segmentationOption(what: string, defaultValue?: Segmentation): Option {
  const o = new Option(
    '--segmentation <mode>',
    `${what}: paragraph (blank lines) or tags (the policy wraps each chunk in <chunk>…</chunk>)`,
  ).choices([...SEGMENTATIONS]);
  return defaultValue === undefined ? o : o.default(defaultValue);
}

/**
 * `--shard K/N`: the job takes part K of N of its input, by a hash of each item's key, so N
 * machines given the same input split it with no overlap; `stepwise merge` joins the parts.
 */
export function shardOption(items: string): Option {
  return new Option(
    '--shard <K/N>',
    `only part K of N of the ${items} (by a hash of the key); join the parts with \`stepwise merge\``,
  ).argParser((v: string) => parseShard(v));
}
