import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';

/**
 * `--config <run.json>`: run a job with the settings another run recorded.
 *
 * run.json is one JSON value, any of:
 * - a run record, as `stepwise runs --json` prints one per line: `{id, command, config: {job}}`;
 * - a job record `{command, hash, settings}`, or anything carrying one in its `job` field (a row
 *   of a job's output, e.g. the first line of labels.jsonl);
 * - a bare settings object `{rollouts: 8, signals: ["abs-q"]}` (no command to check).
 *
 * The recorded settings are what the rows depend on, keyed by flag (`bestOf` is `--best-of`); each
 * sets its flag unless the flag is given on the command line, which wins. Input and output files,
 * shard, concurrency, servers and cache mode are not settings: give them as usual. A record of
 * another command, a field no flag of this command sets, or a value its flag would refuse is a
 * usage error naming the file and the field.
 */
export interface ReplaySpec {
  /** The command whose records this one replays (`job.command`), e.g. `label`, `bench search`. */
  command: string;
  /** Recorded setting → the option attribute that sets it, where they differ (search's `form` is `--prompt-form`). */
  renames?: Readonly<Record<string, string>>;
  /**
   * Settings recorded as a file's digest or contents rather than its name (a chat template, a
   * critic template): the flag must be given on the command line; the rerun records the file
   * again and a different one is refused as other settings.
   */
  fileDigests?: readonly string[];
  /**
   * Turn the recorded settings into settings keyed by flag, where one flag was recorded as two
   * settings (sample's `--segmentation steps` is `{segmentation: paragraph, segmentBy: steps}`).
   */
  adapt?: (settings: Record<string, unknown>) => Record<string, unknown>;
}

/** The command and settings a run.json records (command undefined for a bare settings object). */
export interface RecordedRun {
  command?: string;
  settings: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Read run.json (see {@link ReplaySpec}); throws a UsageError naming the file. */
export function readRunSettings(file: string): RecordedRun {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--config ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  if (text.trim() === '')
    throw new UsageError(`--config ${file}: empty: give one run (a line of \`stepwise runs --json\`)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const lines = text.split('\n').filter((l) => l.trim() !== '').length;
    throw new UsageError(
      lines > 1
        ? `--config ${file}: ${lines} lines, not one JSON value: give one run (a line of \`stepwise runs --json\`)`
        : `--config ${file}: not valid JSON (${(e as Error).message})`,
    );
  }
  if (!isObject(value)) throw new UsageError(`--config ${file}: not a JSON object`);
  const job = (v: unknown, where: string): RecordedRun => {
    if (!isObject(v) || typeof v.command !== 'string' || !isObject(v.settings))
      throw new UsageError(
        `--config ${file}: field "${where}" is not a job record {command, hash, settings}`,
      );
    return { command: v.command, settings: v.settings };
  };
  // A run record: `stepwise runs --json`.
  if (typeof value.id === 'string' && typeof value.command === 'string' && isObject(value.config)) {
    if (value.config.job === undefined)
      throw new UsageError(
        `--config ${file}: run ${value.id} (\`stepwise ${value.command}\`) recorded no settings, so there is nothing to replay`,
      );
    return job(value.config.job, 'config.job');
  }
  if (value.job !== undefined) return job(value.job, 'job');
  if (typeof value.command === 'string' && value.settings !== undefined) return job(value, 'settings');
  return { settings: value };
}

/** A flag that takes no value (`--keep-rollouts`, `--no-trace`): it sets true or false. */
const takesNoValue = (o: Option): boolean => !o.required && !o.optional;

/** The option of `cmd` that takes `value` for attribute `key` (`--cache <mode>` and `--no-cache` share one). */
function optionFor(cmd: Command, key: string, value: unknown): Option | undefined {
  const options = cmd.options.filter((o) => o.attributeName() === key && !o.hidden);
  const boolean = typeof value === 'boolean';
  return (
    options.find((o) => (boolean ? takesNoValue(o) || o.optional : !takesNoValue(o))) ??
    (options.length > 0 ? options[0] : undefined)
  );
}

/** The value commander would hold had the flag been typed with the recorded value. */
function flagValue(option: Option, value: unknown, where: string): unknown {
  if (takesNoValue(option)) {
    if (typeof value !== 'boolean')
      throw new UsageError(`${where} must be true or false (got ${JSON.stringify(value)})`);
    return value;
  }
  // `--strategies <specs...>`: a list, one value per item.
  if (option.variadic && Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  // `--early-stop [batch]`: true is the flag alone, false the flag not given.
  if (option.optional && typeof value === 'boolean') return value ? true : undefined;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) text = value.join(',');
  else throw new UsageError(`${where} must be what ${option.long} takes (got ${JSON.stringify(value)})`);
  if (!option.parseArg) return text;
  try {
    return option.parseArg(text, undefined);
  } catch (e) {
    const message = (e as Error).message;
    throw new UsageError(
      `${where}: ${message}${message.includes(text) ? '' : ` (got ${JSON.stringify(value)})`}`,
    );
  }
}

/**
 * Add `--config <run.json>` to `cmd` (call it after every other option is added). Options that
 * were required stay required, but may now come from the file: the check moves after the file is
 * read.
 */
export function addConfigOption(cmd: Command, spec: ReplaySpec): Command {
  const required = cmd.options.filter((o) => o.mandatory);
  // Still required, and help says so (the program's help marks only mandatory options).
  for (const o of required) {
    o.makeOptionMandatory(false);
    if (!o.description.includes('(required)')) o.description = `${o.description} (required)`;
  }
  cmd.addOption(
    new Option(
      '--config <run.json>',
      `replay the settings a \`stepwise ${spec.command}\` run recorded (a line of \`stepwise runs --json\`, a job record or output row, or a bare settings object); flags given here override them`,
    ),
  );
  cmd.hook('preAction', (_parent, action) => {
    if (action !== cmd) return;
    const file = cmd.getOptionValue('config') as string | undefined;
    if (file !== undefined) replaySettings(cmd, file, spec);
    for (const o of required)
      if (cmd.getOptionValue(o.attributeName()) === undefined)
        cmd.error(`error: required option '${o.flags}' not specified`, {
          exitCode: 2,
          code: 'commander.missingMandatoryOptionValue',
        });
  });
  return cmd;
}

/** Set the flags of `cmd` not given on the command line from the settings `file` records. */
export function replaySettings(cmd: Command, file: string, spec: ReplaySpec): void {
  const run = readRunSettings(file);
  if (run.command !== undefined && run.command !== spec.command)
    throw new UsageError(
      `--config ${file} records a run of \`stepwise ${run.command}\`, not \`stepwise ${spec.command}\`: give a record of a ${spec.command} run`,
    );
  const values: Array<[string, unknown]> = [];
  const settings = spec.adapt ? spec.adapt(run.settings) : run.settings;
  for (const [key, value] of Object.entries(settings)) {
    const where = `--config ${file}: field "${key}"`;
    const attribute = spec.renames?.[key] ?? key;
    const option = optionFor(cmd, attribute, value);
    if (!option || attribute === 'config')
      throw new UsageError(`${where} is not a setting of \`stepwise ${spec.command}\``);
    if (spec.fileDigests?.includes(key)) {
      if (cmd.getOptionValueSource(attribute) !== 'cli')
        throw new UsageError(
          `${where} records a file's digest or contents (${JSON.stringify(value).slice(0, 60)}), not the file: pass ${option.long} FILE (the rerun checks it is the same)`,
        );
      continue;
    }
    values.push([attribute, flagValue(option, value, where)]);
  }
  for (const [attribute, value] of values)
    if (cmd.getOptionValueSource(attribute) !== 'cli')
      cmd.setOptionValueWithSource(attribute, value, 'config');
}
