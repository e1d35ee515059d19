import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { resolveSettings } from '../core/settings-schema.js';
import { type JobSettings, methodJobSettings } from '../jobs/settings.js';
import type { StepJudge } from '../judge/types.js';
import type { ThresholdMode } from './processbench.js';
import { PROCESSBENCH_RECORDED_AS, PROCESSBENCH_SETTINGS } from './settings.js';

export { EVAL_CHUNKS_SETTINGS, PROCESSBENCH_RECORDED_AS, PROCESSBENCH_SETTINGS } from './settings.js';

/** The settings of one ProcessBench evaluation, resolved (defaults filled, checked). */
export type ProcessBenchConfig = z.output<typeof PROCESSBENCH_SETTINGS>;

/**
 * Defaults filled in and every field checked against {@link PROCESSBENCH_SETTINGS}; throws a
 * UsageError naming the field as `nameOf` says (the CLI: its flag). An unknown field is refused.
 */
export function resolveProcessBenchConfig(
  partial: Partial<ProcessBenchConfig> = {},
  nameOf: (field: string) => string = (f) => `processbench settings: ${f}`,
): ProcessBenchConfig {
  return resolveSettings(PROCESSBENCH_SETTINGS, partial, nameOf, 'processbench settings');
}

/**
 * The recorded settings of a ProcessBench run (field `job` of every prediction row and of the run
 * record): the config's row settings (every field not `runOnly`, under its recorded name) and what
 * else the rows depend on (`context`: the judge spec, the data's path, whether the judge stopped
 * at its first negative chunk, the critic template). Paragraph segmentation, the default, is left
 * out: files made before tags existed record none, and must resume.
 */
export function processBenchJobSettings(
  c: ProcessBenchConfig,
  context: Record<string, unknown>,
): JobSettings {
  return methodJobSettings('eval processbench', PROCESSBENCH_SETTINGS, c, context, (row) => {
    const recorded = Object.fromEntries(
      Object.entries(row).map(([k, v]) => [PROCESSBENCH_RECORDED_AS[k] ?? k, v]),
    );
    if (recorded.segmentation === 'paragraph') delete recorded.segmentation;
    return recorded;
  });
}

/**
 * How predictions are made from the judge's output: a scalar judge's scores are thresholded (auto:
 * the threshold of max F1 on `thresholdSubset`, or the number given); a verdict judge uses its own
 * verdicts (a number given sets its vote-share threshold when it is built).
 */
export function thresholdModeOf(
  c: Pick<ProcessBenchConfig, 'threshold' | 'thresholdSubset'>,
  judge: Pick<StepJudge, 'scalar' | 'name'>,
  nameOf: (field: string) => string = (f) => f,
): ThresholdMode {
  if (c.threshold === undefined)
    return judge.scalar ? { mode: 'auto', subset: c.thresholdSubset } : { mode: 'verdict' };
  if (c.threshold === 'auto') {
    if (!judge.scalar)
      throw new UsageError(
        `${nameOf('threshold')} auto tunes scalar judges (prm, shepherd, rollout); ${judge.name} gives verdicts: ` +
          `omit ${nameOf('threshold')}, or give a number to set its vote-share threshold`,
      );
    return { mode: 'auto', subset: c.thresholdSubset };
  }
  return judge.scalar ? { mode: 'fixed', value: c.threshold } : { mode: 'verdict' };
}

/** `<out>.json` → `<out>.predictions.jsonl`, next to the report. */
export function predictionsPathFor(out: string): string {
  return `${out.replace(/\.json$/i, '')}.predictions.jsonl`;
}
