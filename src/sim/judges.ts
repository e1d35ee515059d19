import type { Rng } from '../core/rng.js';
import type { SimOptions } from './options.js';
import {
  exactStepValues,
  isSimSolutionCorrect,
  replayChunk,
  replaySimChunks,
  wrongChunks,
} from './policy.js';
import { applyOp, describeOp, lookupSimQuestion, opSymbol, type SimProblem } from './world.js';

/**
 * The simulated judges. Each answers a real prompt of src/prompts with a reply whose
 * correctness is drawn with the configured rates, against the world's ground truth (a chunk is
 * wrong when it introduces an error: see `ReplayedChunk.wrong`). For text that is not a sim
 * problem (e.g. real ProcessBench problems) no truth is known and every judge answers a seeded
 * guess, and says so in its reply.
 */

/** Non-sim text: probability that the generative judge guesses Positive (most steps of real solutions are right). */
export const GUESS_POSITIVE = 0.8;
/** Non-sim text: probability that the critic guesses −1 (no error); otherwise a uniform paragraph index. */
export const GUESS_NO_ERROR = 0.4;
/** Non-sim text: probability that the outcome model guesses Correct. */
export const GUESS_CORRECT = 0.5;

const NOT_SIM =
  'Simulated judge: this problem is not from the simulated world, so the verdict below is a seeded guess, not an assessment.';

/** Describe what a chunk does, as the first sentence of an analysis. */
function describeChunk(
  problem: SimProblem,
  history: readonly string[],
  chunk: string,
): { about: string; wrong: boolean; detail: string } {
  const before = replaySimChunks(problem, history).state;
  const r = replayChunk(problem, before, chunk);
  switch (r.kind) {
    case 'op': {
      if (before.k >= problem.ops.length)
        return {
          about: 'The chunk applies an operation after all operations of the problem are done.',
          wrong: r.wrong,
          detail: '',
        };
      const op = problem.ops[before.k];
      const expected = applyOp(before.value, op);
      return {
        about: `The chunk applies operation ${before.k + 1} (${describeOp(op)}) to the previous number ${before.value}.`,
        wrong: r.wrong,
        detail: `${before.value} ${opSymbol(op.kind)} ${op.operand} = ${expected}, and the chunk writes ${r.state.value}.`,
      };
    }
    case 'check':
      return {
        about: 'The chunk re-checks the calculation so far.',
        wrong: r.wrong,
        detail: `It concludes the number is ${r.state.value}.`,
      };
    case 'restate':
      return {
        about: 'The chunk restates the current number without calculating.',
        wrong: r.wrong,
        detail: `The previous number is ${before.value}.`,
      };
    case 'final':
      return {
        about: 'The chunk states the final answer.',
        wrong: r.wrong,
        detail: `The number so far is ${before.value}.`,
      };
    default:
      return { about: 'The chunk does not compute anything new.', wrong: false, detail: '' };
  }
}

/**
 * Reply of the generative stepwise judge: a short analysis, then `\boxed{Positive}` or
 * `\boxed{Negative}`. P(Negative | wrong) = sensitivity, P(Positive | right) = specificity; with
 * probability format_failure the reply carries no verdict.
 */
export function simJudgeReply(
  question: string,
  history: readonly string[],
  chunk: string,
  options: Pick<SimOptions, 'sensitivity' | 'specificity' | 'formatFailure'>,
  rng: Rng,
): string {
  const problem = lookupSimQuestion(question);
  if (!problem) {
    const positive = rng.chance(GUESS_POSITIVE);
    return `${NOT_SIM}\n\n\\boxed{${positive ? 'Positive' : 'Negative'}}`;
  }
  const d = describeChunk(problem, history, chunk);
  const positive = d.wrong ? !rng.chance(options.sensitivity) : rng.chance(options.specificity);
  const failed = rng.chance(options.formatFailure);
  const honest = positive !== d.wrong;
  let reasoning: string;
  if (honest)
    reasoning = d.wrong ? `${d.detail} This introduces an error.` : `${d.detail} This is consistent.`.trim();
  else
    reasoning = positive
      ? 'On a quick look the chunk seems consistent.'
      : 'On a quick look something in the chunk seems off.';
  const analysis = `${d.about} ${reasoning}`.trim();
  if (failed) return `${analysis}\n\nI cannot decide on a final judgment for this chunk.`;
  return `${analysis}\n\n\\boxed{${positive ? 'Positive' : 'Negative'}}`;
}

/**
 * Reply of the ProcessBench critic: the earliest wrong paragraph (−1 if none) in `\boxed{}`.
 * With probability critic_accuracy the true index; otherwise a uniformly drawn other index in
 * {−1, 0, …, n−1}; with probability format_failure no boxed index at all.
 */
export function simCriticReply(
  question: string,
  steps: readonly string[],
  options: Pick<SimOptions, 'criticAccuracy' | 'formatFailure'>,
  rng: Rng,
): string {
  const problem = lookupSimQuestion(question);
  let answer: number;
  let head: string;
  if (!problem) {
    answer = steps.length === 0 || rng.chance(GUESS_NO_ERROR) ? -1 : rng.int(0, steps.length - 1);
    head = NOT_SIM;
  } else {
    const truth = wrongChunks(problem, steps).findIndex((w) => w);
    answer = truth;
    if (!rng.chance(options.criticAccuracy) && steps.length > 0) {
      const other = rng.int(0, steps.length - 1); // n choices other than the truth among n + 1
      answer = other - 1 >= truth ? other : other - 1;
    }
    head = 'Simulated critic: reviewed the paragraphs in order.';
  }
  if (rng.chance(options.formatFailure)) return `${head}\n\nI could not settle on an index.`;
  const body =
    answer < 0
      ? 'Every paragraph is correct.'
      : `Paragraphs before ${answer} are correct; paragraph ${answer} has the earliest error.`;
  return `${head} ${body}\n\n\\boxed{${answer}}`;
}

function logit(p: number): number {
  return Math.log(p / (1 - p));
}

function gaussian(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Scores of the simulated PRM, one per step: sigmoid(logit(target) + prm_noise·N(0, 1)) with the
 * target clamped to [0.01, 0.99]. Target `value`: the exact success probability after the step;
 * `step`: 0.9 for a right chunk, 0.1 for a wrong one. Non-sim text: uniform in [0.05, 0.95].
 */
export function simPrmScores(
  question: string,
  steps: readonly string[],
  options: Pick<
    SimOptions,
    | 'prmNoise'
    | 'prmTarget'
    | 'stepError'
    | 'difficultySpread'
    | 'checkRate'
    | 'catchRate'
    | 'falseAlarm'
    | 'restateRate'
  >,
  rng: Rng,
): number[] {
  const problem = lookupSimQuestion(question);
  if (!problem) return steps.map(() => 0.05 + 0.9 * rng.next());
  const targets =
    options.prmTarget === 'value'
      ? exactStepValues(problem, steps, options).slice(1)
      : wrongChunks(problem, steps).map((w) => (w ? 0.1 : 0.9));
  return targets.map((t) => {
    const z = logit(Math.min(0.99, Math.max(0.01, t))) + options.prmNoise * gaussian(rng);
    return 1 / (1 + Math.exp(-z));
  });
}

/**
 * Reply of the outcome model: `\boxed{Correct}` or `\boxed{Incorrect}` for a whole solution.
 * P(Incorrect | final answer wrong) = orm_sensitivity, P(Correct | right) = orm_specificity.
 */
export function simOrmReply(
  question: string,
  solution: string,
  options: Pick<SimOptions, 'ormSensitivity' | 'ormSpecificity'>,
  rng: Rng,
): string {
  const problem = lookupSimQuestion(question);
  if (!problem) return `${NOT_SIM}\n\n\\boxed{${rng.chance(GUESS_CORRECT) ? 'Correct' : 'Incorrect'}}`;
  const right = isSimSolutionCorrect(problem, solution);
  const says = right ? rng.chance(options.ormSpecificity) : !rng.chance(options.ormSensitivity);
  return `Simulated outcome model: checked the final answer.\n\n\\boxed{${says ? 'Correct' : 'Incorrect'}}`;
}
