import { z } from 'zod';
import { setting } from '../core/settings-schema.js';
import { DEFAULT_THRESHOLD } from './common.js';

/**
 * Fields several judge kinds' settings share, each declared here once with its kind's default
 * (the kinds' schemas live beside their algorithms: generative.ts, critic.ts, …).
 */

/** `votes`: sampled replies per request (one request with n = k). */
export function votesSetting(dflt: number, help: string) {
  return setting(z.number().int().min(1).default(dflt), { help, arg: 'k' });
}

/** `threshold`: a chunk is negative when its score is below it. */
export function thresholdSetting() {
  return setting(z.number().default(DEFAULT_THRESHOLD), {
    help: 'a chunk is negative when its score is below this',
    arg: 'x',
  });
}

/** `temperature` with a default that is not one value. */
export function temperatureSetting(defaultText: string) {
  return setting(z.number().min(0).optional(), { help: 'sampling temperature', arg: 't', defaultText });
}

/** `top_p`: nucleus sampling. */
export function topPSetting(dflt: number) {
  return setting(z.number().min(0).max(1).default(dflt), { help: 'nucleus sampling (top-p)', arg: 'p' });
}

/** `max_tokens`: the room of one reply. */
export function maxTokensSetting(dflt: number, help: string) {
  return setting(z.number().int().min(1).default(dflt), { help, arg: 'n' });
}

/**
 * `concurrency`, which every kind takes: requests in flight per endpoint of the judge's model
 * (the model's, not the judge's: it changes how fast, never a verdict).
 */
export const JUDGE_MODEL_SETTINGS = z.object({
  concurrency: setting(z.number().int().min(1).optional(), {
    help: "requests in flight per endpoint of the judge's model (generative: also chunks judged at once without early exit, default 4)",
    arg: 'n',
    defaultText: "the model's",
    runOnly: true,
  }),
});
