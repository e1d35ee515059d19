import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';

/**
 * Every setting of code step labels by mutation testing (Let's reward step by step; ./label.ts,
 * ./job.ts), declared once: its type, bounds, default and help. The flags and help of `stepwise
 * label-code`, their checks, `--config` replay, the settings hash and the docs/cli.md table are
 * derived from it: a field added here appears in all of them.
 */
export const LABEL_CODE_SETTINGS = z.object({
  mutantsPerProblem: setting(z.number().int().min(1).default(3), {
    help: 'failing mutants to keep per problem',
    arg: 'k',
  }),
  maxAttempts: setting(z.number().int().min(1).default(24), {
    help: 'mutants to try per problem before giving up',
    arg: 'n',
  }),
  seed: seedSetting('seed for the order in which mutants are tried', { default: 0 }),
  segmentation: setting(z.enum(['blocks', 'lines']).default('blocks'), {
    help: 'steps: blocks (logical blocks) or lines',
    arg: 'how',
  }),
  reference: setting(z.boolean().default(true), {
    help: 'add the reference solution as an all-positive row',
    defaultText: 'on',
    negate: 'do not add the reference solution as an all-positive row',
  }),
  timeoutMs: setting(z.number().int().min(100).default(5000), {
    help: 'wall-clock limit per test in the sandbox',
    arg: 'ms',
  }),
  concurrency: setting(z.number().int().min(1).optional(), {
    help: 'sandbox runs at a time',
    arg: 'n',
    defaultText: 'the number of cores',
    runOnly: true,
  }),
});
