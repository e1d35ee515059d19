import { resumePhrase } from '../jobs/made-from.js';
import type { LabelSummary } from '../label/job.js';
import type { CacheStats } from '../models/cache.js';
import { cachePhrase, type JobSummary, SIMULATED_WORLD } from './summary.js';

/**
 * The summaries of job commands, readable and as JSON (what `--json` prints): the job harness
 * prints them (src/cli/job-harness.ts).
 */

/** label: rollouts, tokens, and each signal's share of positive chunks. */
export function labelReport(
  s: LabelSummary,
  run: {
    runId: string;
    simulated: boolean;
    cache: CacheStats | undefined;
    settingsHash: string;
    batch?: unknown;
  },
): { readable: JobSummary; json: Record<string, unknown> } {
  const spent = s.spent.policy;
  const readable: JobSummary = {
    command: 'label',
    headline: `${s.solutions} solutions, ${s.chunks} chunks (${resumePhrase(s)})`,
    world: run.simulated ? SIMULATED_WORLD : undefined,
    lines: [
      ['rollouts', `${s.rollouts} (${s.rolloutTokens} completion tokens)`],
      ['this run', `${spent.calls} calls, ${spent.promptTokens + spent.completionTokens} tokens`],
      ['cache', cachePhrase(run.cache)],
      ...Object.entries(s.signals).map(
        ([k, v]) =>
          [
            k,
            `positives ${(100 * v.share).toFixed(1)}% of ${v.labeled} chunks; ${v.withError} solutions with a first error`,
          ] as const,
      ),
      ['settings', run.settingsHash],
    ],
    wrote: [s.out, ...(s.labelsFile ? [`${s.labelsFile} (full labels)`] : [])],
    run: run.runId,
  };
  // The settings are reported by their hash; the resolved config stays in the JSON.
  const { settings: _settings, ...reported } = s;
  const json = {
    run: run.runId,
    ...(run.simulated ? { simulated: true } : {}),
    ...reported,
    cache: run.cache ?? { cachedCalls: 0, calls: 0, note: 'not cached' },
    settingsHash: run.settingsHash,
    ...(run.batch === undefined ? {} : { batch: run.batch }),
  };
  return { readable, json };
}
