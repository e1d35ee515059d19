import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { UsageError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { rowSettingKeys, type SettingsSchema, settingFields } from '../core/settings-schema.js';

/**
 * The settings a job's output depends on, recorded with every row it writes (field `job`) and in
 * its run record, so a rerun that would resume the file can check it is the same job: a file
 * never mixes rows made with different settings.
 *
 * Only what changes the rows belongs here (model specs, sampling, segmentation, judge options,
 * the data set); what only changes how fast or how many (concurrency, timeouts, endpoints,
 * `--limit`) does not, so a run can be resumed with more problems or on more servers. A command
 * or helper adds a setting by adding a field to the values it passes to {@link jobSettings}.
 */
export interface JobSettings {
  /** The command that wrote the rows, e.g. `sample`, `label`, `eval processbench`. */
  command: string;
  /** First 16 hex digits of the SHA-256 of the canonical JSON of `{command, settings}`. */
  hash: string;
  /** The settings themselves, keyed by option name (camelCase, as commander gives them). */
  settings: Record<string, unknown>;
}

/** Part K of N of a job (1-based): the items whose key hashes to K − 1 modulo N (jobs/run-job). */
export interface Shard {
  index: number;
  count: number;
}

/**
 * The job record a row carries: its settings and, when it was written by `--shard K/N`, the part
 * (`shard`, last). The shard is not a setting — it changes which rows, not what a row holds — so
 * it is outside `settings` and the hash: parts resume and merge as one job, and `merge` can tell
 * from the rows alone whether every part of a job was given. Unsharded rows have no `shard`.
 */
export type RowJob = JobSettings & { shard?: Shard };

/**
 * Build the settings record of a job. `undefined` values are dropped (an unset option). Secrets
 * (a key, URL credentials) are redacted before hashing: the hash never depends on them, and the
 * record every row carries holds none. Settings without secrets hash as they always did.
 */
export function jobSettings(command: string, values: Record<string, unknown>): JobSettings {
  const settings: Record<string, unknown> = {};
  const clean = redactSecrets(values);
  for (const key of Object.keys(clean).sort()) if (clean[key] !== undefined) settings[key] = clean[key];
  const hash = createHash('sha256').update(canonicalJson({ command, settings })).digest('hex').slice(0, 16);
  return { command, hash, settings };
}

/**
 * The recorded settings of a method's job, from its settings schema: the resolved config's row
 * settings (every field not `runOnly`) and what else the rows depend on (`context`: model specs,
 * the data set, …). `recorded` renames or reshapes the row settings where existing files record
 * them under other names, so their hashes stay the same. A context key that is one of the
 * schema's fields, or one of the recorded names, is a programming error: it belongs to the config.
 */
export function methodJobSettings(
  command: string,
  schema: SettingsSchema,
  config: object,
  context: Record<string, unknown> = {},
  recorded: (row: Record<string, unknown>) => Record<string, unknown> = (row) => row,
): JobSettings {
  const values = config as Record<string, unknown>;
  const row = recorded(Object.fromEntries(rowSettingKeys(schema).map((k) => [k, values[k]])));
  const fields = new Set([...settingFields(schema).map((f) => f.key), ...Object.keys(row)]);
  for (const key of Object.keys(context))
    if (fields.has(key))
      throw new Error(`${command} settings: "${key}" belongs to the config, not the context`);
  return jobSettings(command, { ...context, ...row });
}

/** `maxTokens` → `--max-tokens`: settings are named as the user typed them. */
export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** One setting that differs between two records. */
export interface SettingDifference {
  key: string;
  /** Value in the existing output (undefined: not set there). */
  recorded: unknown;
  /** Value of this run (undefined: not set now). */
  current: unknown;
}

/** Settings whose values differ (compared as canonical JSON), in key order. */
export function settingsDifferences(recorded: JobSettings, current: JobSettings): SettingDifference[] {
  const keys = [...new Set([...Object.keys(recorded.settings), ...Object.keys(current.settings)])].sort();
  return keys
    .filter((k) => canonicalJson(recorded.settings[k]) !== canonicalJson(current.settings[k]))
    .map((k) => ({ key: k, recorded: recorded.settings[k], current: current.settings[k] }));
}

function show(v: unknown): string {
  return v === undefined ? '(not set)' : JSON.stringify(v);
}

/** A settings record read back from a row, or undefined when the row has none (or a malformed one). */
export function recordedSettings(row: unknown): JobSettings | undefined {
  const job = (row as { job?: unknown } | null)?.job as Partial<JobSettings> | undefined;
  if (!job || typeof job !== 'object') return undefined;
  if (typeof job.command !== 'string' || typeof job.hash !== 'string') return undefined;
  if (!job.settings || typeof job.settings !== 'object') return undefined;
  return job as JobSettings;
}

const HOW_TO_GO_ON = 'pass --fresh to start it over, or choose another --out';

/**
 * Check that `row` (line `line` of the existing output `file`) was written by the same job as
 * `current`; throws a `UsageError` (exit 2) naming the file, the line and every differing setting.
 */
export function assertSameSettings(file: string, line: number, row: unknown, current: JobSettings): void {
  const recorded = recordedSettings(row);
  if (!recorded) {
    throw new UsageError(
      `${file}, line ${line}: this row records no settings (it was not written by \`stepwise ${current.command}\`, ` +
        `or by an older stepwise), so resuming could mix settings: ${HOW_TO_GO_ON}`,
    );
  }
  if (recorded.hash === current.hash && recorded.command === current.command) return;
  if (recorded.command !== current.command) {
    throw new UsageError(
      `${file} holds \`stepwise ${recorded.command}\` output, not \`stepwise ${current.command}\` output: ${HOW_TO_GO_ON}`,
    );
  }
  const diffs = settingsDifferences(recorded, current);
  const list = diffs.map((d) => `${flagName(d.key)} ${show(d.recorded)} in the file, ${show(d.current)} now`);
  throw new UsageError(
    `${file} was made with other settings (${list.join('; ') || `settings hash ${recorded.hash} ≠ ${current.hash}`}); ` +
      `a rerun resumes only the same settings: rerun with the file's settings to resume, ${HOW_TO_GO_ON}`,
  );
}

/** `row` with its job's settings attached (field `job`, last), and its shard when it has one. */
export function withSettings<T extends object>(
  row: T,
  settings: JobSettings,
  shard?: Shard,
): T & { job: RowJob } {
  const { job: _old, ...rest } = row as T & { job?: unknown };
  const job: RowJob = shard ? { ...settings, shard: { index: shard.index, count: shard.count } } : settings;
  return { ...(rest as T), job };
}

/**
 * The shard a row records (`job.shard`), undefined when it records none (an unsharded job, or a
 * row written before rows recorded it). A malformed one goes to `invalid`, which throws.
 */
export function recordedShard(row: unknown, invalid: (message: string) => never): Shard | undefined {
  const shard = ((row as { job?: unknown } | null)?.job as { shard?: unknown } | undefined)?.shard;
  if (shard === undefined) return undefined;
  const { index, count } = (shard ?? {}) as { index?: unknown; count?: unknown };
  if (
    !Number.isSafeInteger(index) ||
    !Number.isSafeInteger(count) ||
    (count as number) < 1 ||
    (index as number) < 1 ||
    (index as number) > (count as number)
  )
    invalid(`expected {index: K, count: N} with 1 ≤ K ≤ N, got ${JSON.stringify(shard)}`);
  return { index: index as number, count: count as number };
}
