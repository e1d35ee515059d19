import { type Command, InvalidArgumentError, Option } from 'commander';

/**
 * One name per setting across commands. Each entry is a setting a user meets on more than one
 * command (or once had another name for): its flag, the old names kept as hidden aliases, and its
 * default where one default fits every command (`defaults` lists the commands that differ, and
 * why). test/cli/vocabulary-registry.test.ts walks every command's options against this table.
 */
export interface Setting {
  /** The one long flag, e.g. `--prompt-form`. */
  flag: string;
  /** Old names, accepted but hidden from help. */
  aliases?: readonly string[];
  /** The default every command that has the setting uses (absent: none, or see `defaults`). */
  default?: string | number | boolean;
  /** Commands whose default differs from `default`, with the reason (value undefined: it depends, as `why` says). */
  defaults?: Readonly<Record<string, { value: string | number | boolean | undefined; why: string }>>;
  /** What it is. */
  meaning: string;
}

/** A timeout is always in milliseconds and always named `--timeout-ms`. */
export const TIMEOUT_FLAG = '--timeout-ms';

/** StepWiser samples its rollouts at temperature 1.0 (METHODS §2): the policy's own distribution. */
export const DEFAULT_TEMPERATURE = 1;
/** Room for a whole MATH-style solution; the judge's budget too. */
export const DEFAULT_MAX_TOKENS = 2048;

export const SETTINGS: readonly Setting[] = [
  { flag: '--input', aliases: ['--from', '--labels'], meaning: 'the input file of a job' },
  {
    flag: '--prompt-form',
    aliases: ['--form'],
    default: 'raw',
    meaning: 'how the policy is prompted: raw completion or chat messages',
  },
  {
    flag: '--segmentation',
    aliases: ['--segment-by', '--segment', '--by'],
    meaning:
      'how a solution is split into chunks; each command accepts the modes it can do (paragraph, steps, lines, tags, llm, blocks)',
    default: 'paragraph',
    defaults: {
      label: { value: undefined, why: "the input's own segmentation, else paragraph" },
      'eval chunks': { value: undefined, why: "the label file's segmentation" },
      'label-code': { value: 'blocks', why: 'code is split into logical blocks' },
    },
  },
  {
    flag: TIMEOUT_FLAG,
    aliases: ['--timeout'],
    meaning:
      'a time limit, in milliseconds, of one unit of work (a request, a test, a comparison, a download)',
    defaults: {
      'label-code': { value: 5000, why: 'one test in the sandbox' },
      verify: { value: 1000, why: 'one comparison' },
      'data pull': { value: 600_000, why: 'one file download' },
    },
  },
  {
    flag: '--aggregation',
    aliases: ['--aggregate'],
    meaning: 'step scores → one solution score',
    default: 'min',
  },
  {
    flag: '--judge-votes',
    aliases: ['--votes'],
    meaning: "sampled judgments per chunk (default: the judge spec's votes, else 1)",
  },
  { flag: '--temperature', default: DEFAULT_TEMPERATURE, meaning: 'policy sampling temperature' },
  {
    flag: '--children-per-node',
    aliases: ['--children'],
    meaning: 'greedy-prm: children sampled per node (the flag of the search setting childrenPerNode)',
  },
  {
    flag: '--max-tokens',
    default: DEFAULT_MAX_TOKENS,
    meaning: 'token budget of one policy completion',
    defaults: {
      segment: { value: undefined, why: 'the reply copies the text: its budget follows the text length' },
    },
  },
  {
    flag: '--store',
    meaning: 'SQLite store of the model-call cache and the run records (default $STEPWISE_HOME/store.sqlite)',
  },
  { flag: '--api-key', meaning: 'API key of the OpenAI-compatible server (default OPENAI_API_KEY)' },
  { flag: '--base-url', meaning: 'OpenAI-compatible server URL(s) (default OPENAI_BASE_URL)' },
  { flag: '--max-retries', meaning: 'retries of a failed request' },
  {
    flag: '--strict-resume',
    default: false,
    meaning:
      'a resumable job exits 2 instead of redoing rows whose input changed (or keeping rows of an older output that record no digest of their input)',
  },
  { flag: '--dataset', meaning: 'a named data set (sim, gsm8k, math, jsonl, …)' },
  { flag: '--fields', meaning: 'jsonl: where id, question and answer are' },
  { flag: '--json', meaning: 'print the result or summary as JSON on stdout', default: false },
  {
    flag: '--config',
    meaning:
      'replay the settings a run recorded (run.json: a line of `stepwise runs --json`, a job record {command, settings} or an output row carrying one, or a bare settings object); flags given on the command line override it (src/cli/config-file.ts)',
  },
];

/** The registry entry whose flag or alias this is. */
export function settingOf(flag: string): Setting | undefined {
  return SETTINGS.find((s) => s.flag === flag || s.aliases?.includes(flag));
}

function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Accept `alias` (an old name) for the option `canonical` of `cmd`, hidden from help. The alias
 * takes the canonical option's parser and choices; `convert` maps its value (e.g. seconds → ms).
 * Both given with different values is a usage error, unless `merge` says how they combine.
 */
export function addAlias(
  cmd: Command,
  canonical: string,
  alias: string,
  options: {
    convert?: (value: unknown) => unknown;
    merge?: (canonicalValue: unknown, aliasValue: unknown) => unknown;
    placeholder?: string;
    parse?: (value: string) => unknown;
  } = {},
): Command {
  const target = cmd.options.find((o) => o.long === canonical);
  if (!target) throw new Error(`${cmd.name()}: no option ${canonical} to alias`);
  const placeholder = options.placeholder ?? target.flags.match(/<[^>]+>|\[[^\]]+\]/)?.[0] ?? '';
  const o = new Option(
    `${alias}${placeholder ? ` ${placeholder}` : ''}`,
    `old name of ${canonical}`,
  ).hideHelp();
  const t = target as Option & { parseArg?: (v: string, prev: unknown) => unknown; argChoices?: string[] };
  if (options.parse) o.argParser((v: string) => options.parse!(v));
  else if (t.argChoices) o.choices(t.argChoices);
  else if (t.parseArg) o.argParser(t.parseArg);
  cmd.addOption(o);
  const aliasKey = attributeOf(alias);
  const key = target.attributeName();
  cmd.hook('preAction', (_parent, action) => {
    if (action !== cmd || cmd.getOptionValueSource(aliasKey) !== 'cli') return;
    const raw = cmd.getOptionValue(aliasKey);
    const value = options.convert ? options.convert(raw) : raw;
    if (cmd.getOptionValueSource(key) === 'cli' && cmd.getOptionValue(key) !== value) {
      if (!options.merge)
        cmd.error(`error: ${alias} is the old name of ${canonical}: give one of them`, {
          exitCode: 2,
          code: 'commander.conflictingOption',
        });
      cmd.setOptionValueWithSource(key, options.merge(cmd.getOptionValue(key), value), 'cli');
      return;
    }
    cmd.setOptionValueWithSource(key, value, 'cli');
  });
  return cmd;
}

/** `--store <file>`: where the model-call cache and the run records live. */
export function storeOption(): Option {
  return new Option(
    '--store <file>',
    'SQLite store of the model-call cache and the run record (default $STEPWISE_HOME/store.sqlite)',
  );
}

/** `--api-key <key>`: the key of the OpenAI-compatible server(s) a job reaches. */
export function apiKeyOption(): Option {
  return new Option('--api-key <key>', 'API key of the OpenAI-compatible server (default OPENAI_API_KEY)');
}

/** `--strict-resume`: refuse, rather than redo, rows of the output whose input changed (jobs/made-from). */
export function strictResumeOption(): Option {
  return new Option(
    '--strict-resume',
    'exit 2 instead of redoing rows of --out whose input record changed since they were made (and instead of keeping rows of an older output that record no digest of their input)',
  );
}

/** `--prompt-form raw|chat` (its old name `--form`: `addAlias(cmd, '--prompt-form', '--form')`). */
export function promptFormOption(what = 'policy prompt form'): Option {
  return new Option('--prompt-form <form>', `${what}: raw completion or chat messages`)
    .choices(['raw', 'chat'])
    .default('raw');
}

/** `--timeout-ms <ms>` parser: a positive integer number of milliseconds. */
export function msOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(
      `${TIMEOUT_FLAG} must be a positive integer of milliseconds (got "${value}")`,
    );
  return n;
}
