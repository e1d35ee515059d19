import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';

/**
 * Every setting of bulk sampling, declared once: its type, bounds, default and help. The flags and
 * help of `stepwise sample`, their checks, `--config` replay, the settings hash and the docs/cli.md
 * table are derived from it: a field added here appears in all of them.
 */
export const SAMPLE_SETTINGS = z.object({
  n: setting(z.number().int().min(1), {
    help: 'samples per problem (one request with n = K: the prompt is read once)',
    arg: 'k',
  }),
  maxTokens: setting(z.number().int().min(1).default(2048), {
    help: 'max completion tokens per sample',
    arg: 't',
  }),
  temperature: setting(z.number().min(0).max(10).default(1), {
    help: 'sampling temperature',
    arg: 't',
  }),
  topP: setting(z.number().min(0).max(1).optional(), {
    help: 'nucleus sampling mass',
    arg: 'p',
  }),
  seed: seedSetting(
    'run seed: each problem gets a seed derived from it and its id (unset: unseeded requests)',
    {
      min: 0,
    },
  ),
  promptForm: setting(z.enum(['raw', 'chat']).default('raw'), {
    help: 'prompt form: raw completion or chat messages',
    arg: 'form',
  }),
  segmentation: setting(z.enum(['paragraph', 'steps', 'lines', 'tags']).default('paragraph'), {
    help: 'how samples are split into chunks: paragraph (blank lines), steps ("Step k:" markers), lines, or tags (the policy is asked to wrap each chunk in <chunk>…</chunk>)',
    arg: 'mode',
  }),
  concurrency: setting(z.number().int().min(1).default(16), {
    help: 'requests in flight per endpoint (problems in flight: this × endpoints)',
    arg: 'c',
    runOnly: true,
  }),
});
