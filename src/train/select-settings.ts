import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';

/**
 * Every setting of judge-based data selection (StepWiser, METHODS §6; ./select.ts), declared once:
 * its type, bounds, default and help. The flags and help of `stepwise select`, their checks,
 * `--config` replay, the settings hash and the docs/cli.md table are derived from it. The judge
 * itself is a spec (`--judge`), recorded beside these settings.
 */
export const SELECT_SETTINGS = z.object({
  seed: seedSetting('seed of the outcome-only pick', { default: 0 }),
  concurrency: setting(z.number().int().min(1).default(8), {
    help: 'problems judged at once',
    arg: 'n',
    runOnly: true,
  }),
});
