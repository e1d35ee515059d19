import { writeFileSync } from 'node:fs';
import type { Problem } from '../core/types.js';
import { type JobProgress, runJsonlJob } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import { Sandbox, type SandboxEnforcement } from '../verify/code/sandbox.js';
import { codeTaskOf } from '../verify/code/tasks.js';
import type { CodeLabelRow, MutationLabelOptions, MutationLabelResult } from './label.js';
import { labelByMutation } from './label.js';
import { generateMutants } from './mutate.js';

export interface MutationLabelJobOptions extends Omit<MutationLabelOptions, 'sandbox'> {
  problems: readonly Problem[];
  /** Output JSONL: one {@link CodeLabelRow} per line. */
  out: string;
  /** Sandbox runs at a time (default: cores). */
  concurrency?: number;
  /** Start over instead of resuming from `<out>.parts.jsonl`. */
  fresh?: boolean;
  /** Recorded on every parts row; a resumed parts file must have the same (see jobs/settings). */
  settings?: JobSettings;
  onProgress?: (p: JobProgress) => void;
  signal?: AbortSignal;
}

/** Totals of a mutation labeling job. */
export interface MutationLabelSummary {
  problems: number;
  /** Problems with at least one row from a failing mutant. */
  labeled: number;
  /** labeled / problems. */
  labeledShare: number;
  rows: number;
  mutantRows: number;
  referenceRows: number;
  /** Every row has as many labels as steps (always true; checked, not assumed). */
  equalLengths: boolean;
  steps: number;
  positiveSteps: number;
  negativeSteps: number;
  mutantsTried: number;
  mutantsFailing: number;
  mutantsSurviving: number;
  /** How the kept mutants failed: failed / error / timeout / memory / … */
  failureStatuses: Record<string, number>;
  mutationKinds: Record<string, number>;
  /** Why problems were skipped, with counts. */
  skipped: Record<string, number>;
  resumed: number;
  out: string;
  /** Where per-problem results are kept for resuming. */
  parts: string;
  wallSeconds: number;
  sandbox: SandboxEnforcement;
}

/** The file where a labeling job keeps per-problem results (one line per problem) for resuming. */
export function partsFileFor(out: string): string {
  return `${out}.parts.jsonl`;
}

/**
 * Mutation labeling over a set of code problems, resumable: per-problem results go to
 * `<out>.parts.jsonl` as they finish (a rerun skips the problems already there), then `out` is
 * written with every row in problem order. One Python process generates all mutants; a
 * {@link Sandbox} pool runs the tests.
 */
export async function runMutationLabelJob(options: MutationLabelJobOptions): Promise<MutationLabelSummary> {
  const started = performance.now();
  const sandbox = new Sandbox({ concurrency: options.concurrency });
  try {
    const enforcement = sandbox.enforcement();
    const references = options.problems
      .map((p) => ({ id: p.id, code: codeTaskOf(p).reference }))
      .filter((r): r is { id: string; code: string } => r.code !== undefined);
    const mutants = await generateMutants(references);
    const parts = partsFileFor(options.out);
    let resumed = 0;
    const results = await runJsonlJob<Problem, MutationLabelResult>({
      items: options.problems,
      keyOf: (p) => p.id,
      keyOfOutput: (r) => r.problemId,
      out: parts,
      fresh: options.fresh,
      settings: options.settings,
      // The sandbox pool bounds the real concurrency; a few problems in flight keep it busy.
      concurrency: Math.max(2, sandbox.concurrency * 2),
      signal: options.signal,
      onProgress: (p) => {
        resumed = p.resumed;
        options.onProgress?.(p);
      },
      process: async (problem) => {
        const m = mutants.get(problem.id);
        if (!m || m.error !== undefined) {
          return {
            problemId: problem.id,
            rows: [],
            referencePassed: false,
            mutantsAvailable: 0,
            mutantsTried: 0,
            mutantsFailing: 0,
            mutantsSurviving: 0,
            skipped: m?.error ? `reference does not parse (${m.error})` : 'no reference solution',
          };
        }
        return labelByMutation(problem, m.mutants, {
          sandbox,
          limits: options.limits,
          mutantsPerProblem: options.mutantsPerProblem,
          maxAttempts: options.maxAttempts,
          seed: options.seed,
          includeReference: options.includeReference,
          segment: options.segment,
        });
      },
    });
    const rows: CodeLabelRow[] = results.flatMap((r) => r.rows);
    writeFileSync(options.out, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return summarize(results, rows, {
      out: options.out,
      parts,
      resumed,
      wallSeconds: (performance.now() - started) / 1000,
      sandbox: enforcement,
    });
  } finally {
    sandbox.close();
  }
}

/** Pure: totals over per-problem results. */
export function summarize(
  results: readonly MutationLabelResult[],
  rows: readonly CodeLabelRow[],
  extra: Pick<MutationLabelSummary, 'out' | 'parts' | 'resumed' | 'wallSeconds' | 'sandbox'>,
): MutationLabelSummary {
  const count = (into: Record<string, number>, key: string) => {
    into[key] = (into[key] ?? 0) + 1;
  };
  const failureStatuses: Record<string, number> = {};
  const mutationKinds: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  let positiveSteps = 0;
  let negativeSteps = 0;
  for (const r of rows) {
    if (r.origin === 'mutant') {
      count(failureStatuses, r.status);
      if (r.mutation) count(mutationKinds, r.mutation.kind);
    }
    for (const l of r.labels) {
      if (l) positiveSteps++;
      else negativeSteps++;
    }
  }
  for (const r of results) if (r.skipped) count(skipped, r.skipped.replace(/ \(.*\)$/, ''));
  const labeled = results.filter((r) => r.rows.some((x) => x.origin === 'mutant')).length;
  return {
    problems: results.length,
    labeled,
    labeledShare: results.length === 0 ? 0 : labeled / results.length,
    rows: rows.length,
    mutantRows: rows.filter((r) => r.origin === 'mutant').length,
    referenceRows: rows.filter((r) => r.origin === 'reference').length,
    equalLengths: rows.every(
      (r) => r.completions.length === r.labels.length && r.chunks.length === r.labels.length,
    ),
    steps: positiveSteps + negativeSteps,
    positiveSteps,
    negativeSteps,
    mutantsTried: results.reduce((a, r) => a + r.mutantsTried, 0),
    mutantsFailing: results.reduce((a, r) => a + r.mutantsFailing, 0),
    mutantsSurviving: results.reduce((a, r) => a + r.mutantsSurviving, 0),
    failureStatuses,
    mutationKinds,
    skipped,
    ...extra,
  };
}
