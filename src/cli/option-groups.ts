import { type Command, Option } from 'commander';
import { z } from 'zod';
import { seedSetting, settingFields } from '../core/settings-schema.js';
import type { Shard } from '../jobs/run-job.js';
import { defaultStorePath } from '../store/db.js';
import { intOption, shardOption } from './options.js';
import { settingOption } from './settings-options.js';
import { JSON_HELP } from './summary.js';
import { apiKeyOption, msOption, storeOption } from './vocabulary.js';

/**
 * Options many commands share, each declared here once (test/cli/option-groups.test.ts counts the
 * declarations in src/): a command adds them with its own help where what they do differs.
 */

/** `--json`: the summary (a job) or the answer (a query) as JSON on stdout. */
export function jsonOption(help: string = JSON_HELP): Option {
  return new Option('--json', help);
}

/** `--quiet`: no progress bar (STEPWISE_QUIET does the same for every command). */
export function quietOption(help = 'no progress bar'): Option {
  return new Option('--quiet', help);
}

/** `--base-url <url>`: the OpenAI-compatible server(s) a command reaches. */
export function baseUrlOption(
  help = 'OpenAI-compatible server(s), comma-separated (default OPENAI_BASE_URL)',
): Option {
  return new Option('--base-url <url>', help);
}

/**
 * `--seed <n>` of a command whose settings are not (yet) a schema: the same declaration as a
 * schema's `seed` ({@link seedSetting}), with commander holding its default.
 */
export function seedOption(help: string, bounds: { min?: number; default?: number } = {}): Option {
  const [field] = settingFields(z.object({ seed: seedSetting(help, bounds) }));
  if (!field) throw new Error('seed: no field');
  const option = settingOption({ ...field, meta: { ...field.meta, defaultText: undefined } }, false);
  return bounds.default === undefined ? option : option.default(bounds.default);
}

/** The run group's flags: where a job writes, whether it starts over, and how it reports. */
export interface RunFlags {
  out: string;
  fresh?: boolean;
  shard?: Shard;
  quiet?: boolean;
  json?: boolean;
}

/**
 * The run group of a resumable job: `--out` (required), `--fresh` (`resumesFrom`: where a rerun
 * resumes, when not `--out` itself), `--shard`, `--quiet`, `--json`.
 */
export function addRunOptions(
  cmd: Command,
  what: { out: string; items: string; resumesFrom?: string },
): Command {
  return cmd
    .requiredOption('--out <file>', what.out)
    .option('--fresh', `start over instead of resuming from ${what.resumesFrom ?? '--out'}`)
    .addOption(shardOption(what.items))
    .addOption(quietOption())
    .addOption(jsonOption());
}

/** The server group's flags: how a job reaches an OpenAI-compatible server, and its store. */
export interface ServerFlags {
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  store?: string;
}

/** The server group: `--base-url`, `--api-key`, `--timeout-ms`, `--max-retries`, `--store`. */
export function addServerOptions(cmd: Command): Command {
  return cmd
    .addOption(baseUrlOption())
    .addOption(apiKeyOption())
    .option('--timeout-ms <ms>', 'timeout of one HTTP request', msOption)
    .option('--max-retries <r>', 'retries of a failed request', intOption('--max-retries', 0))
    .addOption(storeOption());
}

/** What the provider registry takes of the server group: the openai backend's settings and the store. */
export function serverOptionsOf(flags: ServerFlags): {
  settings: { baseUrl?: string; apiKey?: string; timeoutMs?: number; maxRetries?: number };
  storePath: string;
} {
  const { baseUrl, apiKey, timeoutMs, maxRetries } = flags;
  return {
    settings: { baseUrl, apiKey, timeoutMs, maxRetries },
    storePath: flags.store ?? defaultStorePath(),
  };
}

/**
 * `--name <name>`: a name for the run a command records (src/cli/run-name.ts gives it to every
 * run-recording command and to the runs it starts).
 */
export function runNameOption(parse: (value: string) => string): Option {
  return new Option(
    '--name <name>',
    'a name for this run, kept in the store and shown by `stepwise runs` and the web view',
  ).argParser(parse);
}
