import { Option } from 'commander';
import { z } from 'zod';
import { seedSetting, settingFields } from '../core/settings-schema.js';
import { settingOption } from './settings-options.js';
import { JSON_HELP } from './summary.js';

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
