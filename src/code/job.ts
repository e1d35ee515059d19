import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Problem } from '../core/types.js';
import { removeOnExit } from '../jobs/remove-on-exit.js';
import { type JobProgress, runStreamJob, type Shard } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import { Sandbox, type SandboxEnforcement } from '../verify/code/sandbox.js';
import { codeTaskOf } from '../verify/code/tasks.js';
import type { CodeLabelRow, MutationLabelOptions, MutationLabelResult } from './label.js';
import { labelByMutation } from './label.js';
import { generateMutants, type MutantsOf } from './mutate.js';

export interface MutationLabelJobOptions extends Omit<MutationLabelOptions, 'sandbox'> {
  /** The problems, taken a few batches ahead of the work (a list, or read from a file as needed). */
  problems: Iterable<Problem> | AsyncIterable<Problem>;
  /** How many problems there are, for progress (a list's length by default). */
  total?: number;
  /** Output JSONL: one {@link CodeLabelRow} per line. */
  out: string;
  /** Sandbox runs at a time (default: cores). */
  concurrency?: number;
  /** Start over instead of resuming from `<out>.parts.jsonl`. */
  fresh?: boolean;
  /** Only this part of the problems (by a hash of the problem id); parts join with `stepwise merge`. */
  shard?: Shard;
  /** Recorded on every parts row; a resumed parts file must have the same (see jobs/settings). */
  settings?: JobSettings;
  /** Exit 2 instead of redoing problems whose record changed since they were labeled (jobs/made-from). */
  strictResume?: boolean;
  /** Told of parts rows kept unverified (an older parts file that records no digest of its input). */
  onWarning?: (message: string) => void;
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
  /** Problems whose parts row was made from another problem record: labeled again. */
  redone: number;
  /** Parts rows of an older file that record no digest of their problem (kept unchecked). */
  unverified: number;
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
    const { problems } = options;
    const total = options.total ?? (Array.isArray(problems) ? problems.length : undefined);
    const parts = partsFileFor(options.out);
    // Rows go to `out` as the finished parts file is read back in problem order, and only
    // counts are kept: memory holds the problems in flight, not the job's rows.
    const acc = mutationLabelAccumulator();
    const tmp = `${options.out}.tmp-${process.pid}`;
    mkdirSync(dirname(resolve(options.out)), { recursive: true });
    const fd = openSync(tmp, 'w');
    // Ctrl-C exits the process (130) without reaching the `finally` below: the exit removes tmp.
    const placed = removeOnExit(tmp);
    let result: Awaited<ReturnType<typeof runStreamJob>>;
    try {
      result = await runStreamJob<WithMutants, MutationLabelResult>({
        items: withMutants(problems, MUTANT_BATCH),
        keyOf: (x) => x.problem.id,
        keyOfOutput: (r) => r.problemId,
        out: parts,
        fresh: options.fresh,
        strictResume: options.strictResume,
        onWarning: options.onWarning,
        unit: 'problems',
        // A row is made from its problem (the mutants follow from it and the settings).
        contentOf: (x) => x.problem,
        settings: options.settings,
        shard: options.shard,
        total: options.shard ? undefined : total,
        // The sandbox pool bounds the real concurrency; a few problems in flight keep it busy.
        concurrency: Math.max(2, sandbox.concurrency * 2),
        signal: options.signal,
        onProgress: options.onProgress,
        onRecord: (r) => {
          acc.add(r);
          if (r.rows.length > 0) writeSync(fd, r.rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
        },
        process: async ({ problem, mutants: m }) => {
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
    } finally {
      closeSync(fd);
    }
    // Interrupted: the parts file keeps the finished problems; `out` is written by a finished run only.
    if (result.finalized) renameSync(tmp, options.out);
    else rmSync(tmp, { force: true });
    placed();
    return acc.result({
      out: options.out,
      parts,
      resumed: result.resumed,
      redone: result.redone,
      unverified: result.unverified,
      wallSeconds: (performance.now() - started) / 1000,
      sandbox: enforcement,
    });
  } finally {
    await sandbox.close();
  }
}

/** A problem with the mutants of its reference solution (none when it has no reference). */
interface WithMutants {
  problem: Problem;
  mutants: MutantsOf | undefined;
}

/** Problems whose mutants one Python process makes at a time: few enough to keep, many enough to start it rarely. */
const MUTANT_BATCH = 64;

/** The problems with their mutants, made `batch` problems at a time as the job reads on. */
async function* withMutants(
  problems: Iterable<Problem> | AsyncIterable<Problem>,
  batch: number,
): AsyncGenerator<WithMutants> {
  let pending: Problem[] = [];
  const flush = async function* (): AsyncGenerator<WithMutants> {
    const references = pending
      .map((p) => ({ id: p.id, code: codeTaskOf(p).reference }))
      .filter((r): r is { id: string; code: string } => r.code !== undefined);
    const mutants = references.length > 0 ? await generateMutants(references) : new Map<string, MutantsOf>();
    const done = pending;
    pending = [];
    for (const problem of done) yield { problem, mutants: mutants.get(problem.id) };
  };
  for await (const problem of problems) {
    pending.push(problem);
    if (pending.length >= batch) yield* flush();
  }
  if (pending.length > 0) yield* flush();
}

/** Pure: totals over per-problem results. */
export function summarize(
  results: readonly MutationLabelResult[],
  _rows: readonly CodeLabelRow[],
  extra: Pick<
    MutationLabelSummary,
    'out' | 'parts' | 'resumed' | 'redone' | 'unverified' | 'wallSeconds' | 'sandbox'
  >,
): MutationLabelSummary {
  const acc = mutationLabelAccumulator();
  for (const r of results) acc.add(r);
  return acc.result(extra);
}

/** {@link summarize} one problem at a time: keeps counts, not rows. */
export function mutationLabelAccumulator(): {
  add(r: MutationLabelResult): void;
  result(
    extra: Pick<
      MutationLabelSummary,
      'out' | 'parts' | 'resumed' | 'redone' | 'unverified' | 'wallSeconds' | 'sandbox'
    >,
  ): MutationLabelSummary;
} {
  const count = (into: Record<string, number>, key: string) => {
    into[key] = (into[key] ?? 0) + 1;
  };
  const failureStatuses: Record<string, number> = {};
  const mutationKinds: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  const t = {
    problems: 0,
    labeled: 0,
    rows: 0,
    mutantRows: 0,
    referenceRows: 0,
    equalLengths: true,
    positiveSteps: 0,
    negativeSteps: 0,
    mutantsTried: 0,
    mutantsFailing: 0,
    mutantsSurviving: 0,
  };
  return {
    add(result) {
      t.problems++;
      if (result.rows.some((x) => x.origin === 'mutant')) t.labeled++;
      if (result.skipped) count(skipped, result.skipped.replace(/ \(.*\)$/, ''));
      t.mutantsTried += result.mutantsTried;
      t.mutantsFailing += result.mutantsFailing;
      t.mutantsSurviving += result.mutantsSurviving;
      for (const r of result.rows) {
        t.rows++;
        if (r.origin === 'mutant') {
          t.mutantRows++;
          count(failureStatuses, r.status);
          if (r.mutation) count(mutationKinds, r.mutation.kind);
        } else if (r.origin === 'reference') t.referenceRows++;
        if (r.completions.length !== r.labels.length || r.chunks.length !== r.labels.length)
          t.equalLengths = false;
        for (const l of r.labels) {
          if (l) t.positiveSteps++;
          else t.negativeSteps++;
        }
      }
    },
    result(extra) {
      return {
        problems: t.problems,
        labeled: t.labeled,
        labeledShare: t.problems === 0 ? 0 : t.labeled / t.problems,
        rows: t.rows,
        mutantRows: t.mutantRows,
        referenceRows: t.referenceRows,
        equalLengths: t.equalLengths,
        steps: t.positiveSteps + t.negativeSteps,
        positiveSteps: t.positiveSteps,
        negativeSteps: t.negativeSteps,
        mutantsTried: t.mutantsTried,
        mutantsFailing: t.mutantsFailing,
        mutantsSurviving: t.mutantsSurviving,
        failureStatuses,
        mutationKinds,
        skipped,
        ...extra,
      };
    },
  };
}
