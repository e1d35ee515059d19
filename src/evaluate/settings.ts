import { z } from 'zod';
import { SEGMENTATIONS } from '../core/segment.js';
import { seedSetting, setting } from '../core/settings-schema.js';
import { PROCESSBENCH_SUBSETS } from '../data/processbench.js';

/** A comma-separated list as typed (`gsm8k,math`), empty items dropped. */
function commaList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `auto` or a number. */
function thresholdValue(text: string): 'auto' | number {
  if (text === 'auto') return 'auto';
  return text.trim() === '' ? Number.NaN : Number(text);
}

/**
 * Every setting of a ProcessBench evaluation (METHODS §4), declared once: its type, bounds, default
 * and help. The flags and help of `stepwise eval processbench`, the library's checks
 * ({@link resolveProcessBenchConfig}), `--config` replay, the settings hash and the docs/cli.md
 * table are derived from it: a field added here appears in all of them. The judge itself is a
 * spec (`--judge`, whose kinds declare their own settings: src/judge/kinds.ts).
 */
export const PROCESSBENCH_SETTINGS = z.object({
  judgeVotes: setting(z.number().int().min(1).optional(), {
    help: "votes per chunk (generative, orm) or samples voted on (critic); beats the spec's votes",
    arg: 'k',
    defaultText: "the judge kind's votes (critic 8, others 1)",
  }),
  threshold: setting(z.union([z.literal('auto'), z.number()]).optional(), {
    help: 'scalar judges (prm, shepherd, rollout): auto (the threshold of max F1 on --threshold-subset) or a score threshold; verdict judges use their own verdicts',
    arg: 'x',
    defaultText: 'auto for scalar judges',
    requirement: 'auto or a number',
    parse: thresholdValue,
    runOnly: true,
  }),
  thresholdSubset: setting(z.string().min(1).default('gsm8k'), {
    help: 'subset on which --threshold auto is chosen',
    arg: 'name',
    requirement: 'a subset name',
    runOnly: true,
  }),
  subsets: setting(z.array(z.string().min(1)).min(1).optional(), {
    help: 'comma-separated subsets to judge',
    arg: 'list',
    defaultText: PROCESSBENCH_SUBSETS.join(','),
    requirement: 'a comma-separated list of subset names',
    parse: commaList,
    runOnly: true,
  }),
  limit: setting(z.number().int().min(1).optional(), {
    help: 'n samples per subset, spread evenly over each file (both classes kept)',
    arg: 'n',
    defaultText: 'all',
    runOnly: true,
  }),
  seed: seedSetting('seed of the judge requests (sampled votes reproduce)', { min: 0, default: 0 }),
  segmentation: setting(z.enum(SEGMENTATIONS).default('paragraph'), {
    help: 'how a judge is shown earlier steps: paragraph ([Step i] blocks) or tags (as <chunk>s, for steps a policy wrote in tags)',
    arg: 'mode',
  }),
  concurrency: setting(z.number().int().min(1).default(16), {
    help: 'samples judged at once',
    arg: 'c',
    runOnly: true,
  }),
});

/** The settings of `eval chunks` (a judge against rollout labels): the judge's, as ProcessBench has them. */
export const EVAL_CHUNKS_SETTINGS = PROCESSBENCH_SETTINGS.pick({
  judgeVotes: true,
  seed: true,
  concurrency: true,
});

/**
 * Settings recorded under another name than their field's (and flag's): `--judge-votes` was
 * recorded as `votes` before the flag had its judge- prefix, and old outputs must still resume.
 */
export const PROCESSBENCH_RECORDED_AS: Readonly<Record<string, string>> = { judgeVotes: 'votes' };
