import { createRng } from '../core/rng.js';
import type { Problem } from '../core/types.js';
import type { ProcessBenchRecord } from '../data/types.js';
import { simChunkDifficulties, simJudgeRates } from './judges.js';
import { resolveSimOptions, type SimOptions } from './options.js';
import { firstWrongStep, isSimSolutionCorrect, sampleSimSolution, simSuccessRate } from './policy.js';
import {
  generateSimProblems,
  lookupSimQuestion,
  type SimProblem,
  simProblemSequence,
  solveSimProblem,
  toProblem,
} from './world.js';

/**
 * Data sets of the simulated world: problem files for `stepwise sample`, and ProcessBench-format
 * solution sets whose labels are the true first errors.
 */

/** One problem row of a sim problem file (JSONL). `question` and `problem` carry the same text. */
export interface SimProblemRow {
  id: string;
  question: string;
  problem: string;
  answer: string;
  source: 'sim';
  steps: number;
  /** Exact success rate of the sim policy (with the options the file was written with). */
  success_rate: number;
  simulated: true;
}

/**
 * A ProcessBench-format row (INTERFACES.md) from the simulated world: the loader's record without
 * the subset (the file name); `label` is the first chunk that introduces an error, −1 if none.
 */
/** A ProcessBench row plus the gold `answer`, so the same file can also be labeled by rollouts (`stepwise label`). */
export type SimProcessBenchRow = Omit<ProcessBenchRecord, 'subset'> & { answer: string };

/** The `generator` field of sim ProcessBench rows: says the solutions are simulated. */
export const SIM_GENERATOR = 'stepwise-sim-policy (simulated)';

function problemsFor(count: number, options: SimOptions): SimProblem[] {
  return generateSimProblems({
    count,
    seed: options.seed,
    minSteps: options.minSteps,
    maxSteps: options.maxSteps,
  });
}

/** `count` problem rows, ids `sim/<seed>/<i>`. */
export function simProblemRows(count: number, partial: Partial<SimOptions> = {}): SimProblemRow[] {
  const options = resolveSimOptions(partial);
  return problemsFor(count, options).map((p, i) => ({
    id: `sim/${options.seed}/${i}`,
    question: p.question,
    problem: p.question,
    answer: String(solveSimProblem(p)),
    source: 'sim',
    steps: p.ops.length,
    success_rate: simSuccessRate(p, options),
    simulated: true,
  }));
}

/** `count` problems as data-set `Problem`s (what a `sim` data set name loads). */
export function simDatasetProblems(count: number, partial: Partial<SimOptions> = {}): Problem[] {
  return [...simDatasetProblemSequence(count, partial)];
}

/** {@link simDatasetProblems} one problem at a time, each made as it is asked for. */
export function* simDatasetProblemSequence(
  count: number,
  partial: Partial<SimOptions> = {},
): Generator<Problem> {
  const options = resolveSimOptions(partial);
  let i = 0;
  for (const p of simProblemSequence({
    count,
    seed: options.seed,
    minSteps: options.minSteps,
    maxSteps: options.maxSteps,
  })) {
    const out = toProblem(p, `sim/${options.seed}/${i++}`);
    out.meta = { ...out.meta, successRate: simSuccessRate(p, options) };
    yield out;
  }
}

/** Options of a ProcessBench-format set. */
export interface SimProcessBenchOptions {
  count: number;
  /**
   * Share of rows with an error (label ≠ −1) to aim for, by drawing solutions until each row's
   * class is met; unset = the policy's natural share.
   */
  errorShare?: number;
}

/**
 * ProcessBench-format rows: one policy solution per problem (problem i of the seed), with the
 * true first wrong chunk as `label`. Row ids `sim-pb/<seed>/<i>`.
 */
export function simProcessBenchRows(
  set: SimProcessBenchOptions,
  partial: Partial<SimOptions> = {},
): SimProcessBenchRow[] {
  const options = resolveSimOptions(partial);
  const problems = problemsFor(set.count, options);
  const rng = createRng(`sim-processbench:${options.seed}`);
  const share = set.errorShare;
  return problems.map((p, i) => {
    // Spread the wanted error rows evenly over the set (so any prefix of it has about the share).
    const wantError = share === undefined ? undefined : Math.floor((i + 1) * share) > Math.floor(i * share);
    let steps = sampleSimSolution(p, options, rng.fork(`${i}:0`));
    let label = firstWrongStep(p, steps);
    // Redraw until the row has the wanted class (bounded: a problem whose policy never errs, or
    // almost always errs — several trap steps — keeps its last draw).
    for (let attempt = 1; wantError !== undefined && wantError !== label >= 0 && attempt < 2000; attempt++) {
      steps = sampleSimSolution(p, options, rng.fork(`${i}:${attempt}`));
      label = firstWrongStep(p, steps);
    }
    return {
      id: `sim-pb/${options.seed}/${i}`,
      generator: SIM_GENERATOR,
      problem: p.question,
      answer: String(solveSimProblem(p)),
      steps,
      final_answer_correct: isSimSolutionCorrect(p, steps.join('\n\n')),
      label,
    };
  });
}

/**
 * The exact expected ProcessBench accuracies of a verdict judge with early exit (one vote, no
 * format failures) on labeled rows: a row with first error e is predicted right with probability
 * sp_0·…·sp_(e−1)·se_e (the e right chunks judged Positive, then the wrong one Negative); a row
 * without error with probability sp_0·…·sp_(n−1). The per-chunk rates are those the simulated
 * judge uses ({@link simJudgeRates}: errors grown by each chunk's difficulty); for a row whose
 * problem is not a sim question, or with `judgeDifficulty` 0, they are sensitivity and
 * specificity themselves. error_acc and correct_acc are the means over the two groups (percent);
 * F1 = 2·a·c/(a + c) of those means. `options` are resolved over the sim defaults.
 */
export function expectedProcessBenchScores(
  rows: ReadonlyArray<{ problem?: string; steps: readonly string[]; label: number }>,
  partial: Partial<SimOptions> & { sensitivity: number; specificity: number },
): { error_acc: number; correct_acc: number; f1: number } {
  const options = resolveSimOptions(partial);
  let errSum = 0;
  let errN = 0;
  let corSum = 0;
  let corN = 0;
  for (const r of rows) {
    const problem = r.problem === undefined ? null : lookupSimQuestion(r.problem);
    const rates = problem
      ? simChunkDifficulties(problem, r.steps, options).map((c) => simJudgeRates(c.difficulty, options))
      : r.steps.map(() => ({ sensitivity: options.sensitivity, specificity: options.specificity }));
    const end = r.label >= 0 ? r.label : r.steps.length;
    let p = 1;
    for (let j = 0; j < end; j++) p *= rates[j].specificity;
    if (r.label >= 0) {
      errSum += p * rates[r.label].sensitivity;
      errN++;
    } else {
      corSum += p;
      corN++;
    }
  }
  const a = errN ? (100 * errSum) / errN : 0;
  const c = corN ? (100 * corSum) / corN : 0;
  return { error_acc: a, correct_acc: c, f1: a + c === 0 ? 0 : (2 * a * c) / (a + c) };
}
