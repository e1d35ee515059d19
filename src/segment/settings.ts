import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';
import { DEFAULT_SEGMENTER_ATTEMPTS } from './llm.js';

/**
 * Every setting of LLM segmentation (`stepwise segment --segmentation llm`), declared once: its
 * type, bounds, default and help. The flags and help, the checks, `--config` replay, the settings
 * hash of the output rows (./job.ts) and the docs/cli.md table are derived from it.
 */
export const SEGMENT_SETTINGS = z.object({
  attempts: setting(z.number().int().min(1).default(DEFAULT_SEGMENTER_ATTEMPTS), {
    help: 'with --segmentation llm: replies asked for per solution before falling back to paragraphs',
    arg: 'k',
  }),
  whitespace: setting(z.enum(['between-chunks', 'exact']).default('between-chunks'), {
    help: 'with --segmentation llm: between-chunks (whitespace between chunks may differ) or exact (the tag-free reply must equal the text)',
    arg: 'rule',
  }),
  maxTokens: setting(z.number().int().min(1).optional(), {
    help: 'with --segmentation llm: token budget of one reply',
    arg: 't',
    defaultText: 'from the text length',
  }),
  retryTemperature: setting(z.number().min(0).max(10).default(0.7), {
    help: 'with --segmentation llm: temperature of retries (the first reply is greedy)',
    arg: 't',
  }),
  seed: seedSetting('with --segmentation llm: base seed of the requests', { min: 0, default: 0 }),
  concurrency: setting(z.number().int().min(1).default(8), {
    help: 'with --segmentation llm: solutions in flight',
    arg: 'c',
    runOnly: true,
  }),
});

/** The settings of one LLM segmentation run, resolved (defaults filled). */
export type SegmentConfig = z.output<typeof SEGMENT_SETTINGS>;
