import { createRng, hashString, hashStringFrom, type Rng } from '../core/rng.js';
import type { SimOptions } from './options.js';
import {
  exactStepValues,
  initialSimState,
  isSimSolutionCorrect,
  replayChunk,
  replaySimChunks,
  type SimState,
  simValueTable,
  wrongChunks,
} from './policy.js';
import {
  applyOp,
  describeOp,
  lookupSimQuestion,
  opSymbol,
  type SimProblem,
  type SimStep,
  simDifficulty,
  simSteps,
  truthValues,
} from './world.js';

/**
 * The simulated judges. Each answers a real prompt of src/prompts with a reply whose
 * correctness is drawn with the configured rates, against the world's ground truth (a chunk is
 * wrong when it introduces an error: see `ReplayedChunk.wrong`). Every judge's error rate grows
 * with difficulty: base rate × δ^judge_difficulty, δ the chunk's step difficulty (or the
 * problem's, for judges of whole solutions). What each judge reads is listed in docs/sim.md;
 * only the PRM under `prm=oracle` reads exact values, and it is named so. For text that is not a
 * sim problem (e.g. real ProcessBench problems) no truth is known and every judge answers a
 * seeded guess, and says so in its reply.
 */

/** Non-sim text: probability that the generative judge guesses Positive (most steps of real solutions are right). */
export const GUESS_POSITIVE = 0.8;
/** Non-sim text: probability that the critic guesses −1 (no error); otherwise a uniform paragraph index. */
export const GUESS_NO_ERROR = 0.4;
/** Non-sim text: probability that the outcome model guesses Correct. */
export const GUESS_CORRECT = 0.5;

const NOT_SIM =
  'Simulated judge: this problem is not from the simulated world, so the verdict below is a seeded guess, not an assessment.';

/**
 * An error rate grown with difficulty: min(1, base × δ^g). Mean δ is about 1, so averaged over
 * chunks a judge errs at about its base rate, but more on hard steps (where the policy errs too).
 */
export function scaledErrorRate(base: number, difficulty: number, exponent: number): number {
  if (base <= 0) return 0;
  return Math.min(1, base * difficulty ** exponent);
}

type DifficultyOptions = Pick<SimOptions, 'stepError' | 'difficultySpread' | 'misconception' | 'recur'>;

/**
 * The step difficulty δ of a chunk replayed from `before`: an operation's (difficulty ×
 * weight(op)); a check's, of the operation it checks; anything else the problem's difficulty.
 * `steps` is {@link simSteps} of the problem, computed once per solution by the caller.
 */
function chunkDifficulty(
  problem: SimProblem,
  before: SimState,
  kind: string,
  steps: readonly SimStep[],
  options: DifficultyOptions,
): number {
  if (kind === 'op' && before.k < steps.length) return steps[before.k].difficulty;
  if (kind === 'check' && before.k > 0 && before.k <= steps.length) return steps[before.k - 1].difficulty;
  return simDifficulty(problem, options);
}

/** Per chunk of a solution: is it wrong, and its step difficulty δ (what the judges' rates grow with). */
export function simChunkDifficulties(
  problem: SimProblem,
  chunks: readonly string[],
  options: DifficultyOptions,
): Array<{ wrong: boolean; difficulty: number; kind: string }> {
  const steps = simSteps(problem, options);
  let state = initialSimState(problem);
  return chunks.map((c) => {
    const r = replayChunk(problem, state, c);
    const out = {
      wrong: r.wrong,
      difficulty: chunkDifficulty(problem, state, r.kind, steps, options),
      kind: r.kind,
    };
    state = r.state;
    return out;
  });
}

/**
 * A judge's rates on a chunk (or problem) of difficulty δ: P(Negative | wrong), P(Positive | right),
 * their base rates' error rates grown by δ. The generative judge's with its options; the PRM and
 * outcome model pass their own base rates.
 */
export function simJudgeRates(
  difficulty: number,
  options: Pick<SimOptions, 'sensitivity' | 'specificity' | 'judgeDifficulty'>,
): { sensitivity: number; specificity: number } {
  return {
    sensitivity: 1 - scaledErrorRate(1 - options.sensitivity, difficulty, options.judgeDifficulty),
    specificity: 1 - scaledErrorRate(1 - options.specificity, difficulty, options.judgeDifficulty),
  };
}

/** Describe what a chunk does, as the first sentence of an analysis. */
function describeChunk(
  problem: SimProblem,
  history: readonly string[],
  chunk: string,
  options: DifficultyOptions,
): { about: string; wrong: boolean; detail: string; difficulty: number } {
  const before = replaySimChunks(problem, history).state;
  const r = replayChunk(problem, before, chunk);
  const difficulty = chunkDifficulty(problem, before, r.kind, simSteps(problem, options), options);
  return { ...describeReplayed(problem, before, r), difficulty };
}

function describeReplayed(
  problem: SimProblem,
  before: SimState,
  r: ReturnType<typeof replayChunk>,
): { about: string; wrong: boolean; detail: string } {
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
 * `\boxed{Negative}`. P(Negative | wrong) and P(Positive | right) are sensitivity and
 * specificity with their error rates grown by the chunk's difficulty ({@link simJudgeRates}); with
 * probability format_failure the reply carries no verdict.
 */
export function simJudgeReply(
  question: string,
  history: readonly string[],
  chunk: string,
  options: SimOptions,
  rng: Rng,
): string {
  return prepareSimJudgeReply(question, history, chunk, options)(rng);
}

/**
 * {@link simJudgeReply} in two parts: the history and chunk are read once here, each call of the
 * returned function draws one reply (n samples of a request cost one reading).
 */
export function prepareSimJudgeReply(
  question: string,
  history: readonly string[],
  chunk: string,
  options: SimOptions,
): (rng: Rng) => string {
  const problem = lookupSimQuestion(question);
  if (!problem)
    return (rng) => {
      const positive = rng.chance(GUESS_POSITIVE);
      return `${NOT_SIM}\n\n\\boxed{${positive ? 'Positive' : 'Negative'}}`;
    };
  const d = describeChunk(problem, history, chunk, options);
  return (rng) => judgeReplyOf(d, options, rng);
}

function judgeReplyOf(d: ReturnType<typeof describeChunk>, options: SimOptions, rng: Rng): string {
  const rates = simJudgeRates(d.difficulty, options);
  const positive = d.wrong ? !rng.chance(rates.sensitivity) : rng.chance(rates.specificity);
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
 * The true index with probability 1 − (1 − critic_accuracy)·d^judge_difficulty (d the problem's
 * difficulty); otherwise a uniformly drawn other index in {−1, 0, …, n−1}; with probability
 * format_failure no boxed index at all.
 */
export function simCriticReply(
  question: string,
  steps: readonly string[],
  options: SimOptions,
  rng: Rng,
): string {
  return prepareSimCriticReply(question, steps, options)(rng);
}

/** {@link simCriticReply} in two parts: the steps are replayed once, each call draws one reply. */
export function prepareSimCriticReply(
  question: string,
  steps: readonly string[],
  options: SimOptions,
): (rng: Rng) => string {
  const problem = lookupSimQuestion(question);
  const truth = problem ? wrongChunks(problem, steps).findIndex((w) => w) : -1;
  return (rng) => criticReplyOf(problem, truth, steps.length, options, rng);
}

function criticReplyOf(
  problem: SimProblem | null,
  truth: number,
  stepCount: number,
  options: SimOptions,
  rng: Rng,
): string {
  let answer: number;
  let head: string;
  if (!problem) {
    answer = stepCount === 0 || rng.chance(GUESS_NO_ERROR) ? -1 : rng.int(0, stepCount - 1);
    head = NOT_SIM;
  } else {
    answer = truth;
    const miss = scaledErrorRate(
      1 - options.criticAccuracy,
      simDifficulty(problem, options),
      options.judgeDifficulty,
    );
    if (!rng.chance(1 - miss) && stepCount > 0) {
      const other = rng.int(0, stepCount - 1); // n choices other than the truth among n + 1
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

/** sigmoid(logit(t) + noise·N(0, 1)), t clamped to [0.01, 0.99]. */
function noisyScore(target: number, noise: number, rng: Rng): number {
  const z = logit(Math.min(0.99, Math.max(0.01, target))) + noise * gaussian(rng);
  return 1 / (1 + Math.exp(-z));
}

/** The outcome model's rates on a problem: its base rates with errors grown by the problem's difficulty. */
export function simOrmRates(
  problem: SimProblem,
  options: Pick<
    SimOptions,
    | 'ormSensitivity'
    | 'ormSpecificity'
    | 'judgeDifficulty'
    | 'stepError'
    | 'difficultySpread'
    | 'misconception'
    | 'recur'
  >,
): { sensitivity: number; specificity: number } {
  return simJudgeRates(simDifficulty(problem, options), {
    sensitivity: options.ormSensitivity,
    specificity: options.ormSpecificity,
    judgeDifficulty: options.judgeDifficulty,
  });
}

/**
 * Scores of the simulated PRM, one per step. Like a real PRM (a causal model reading the prefix),
 * the score of step i depends on the steps up to i alone: its draws are seeded by the world seed,
 * the question and those steps, so the same prefix gets the same score in every request.
 *
 * - `value` (default): the success probability of the state the PRM *believes* the solution is
 *   in. It perceives each chunk as wrong or right with prm_sensitivity / prm_specificity (error
 *   rates grown by the chunk's difficulty): a chunk perceived wrong makes it believe the number is
 *   wrong; a check that corrects the number, perceived right, makes it believe the number is right
 *   again. Score = sigmoid(logit(V(believed state)) + prm_noise·N(0, 1)). The final answer's score
 *   is an outcome verdict drawn at the outcome model's rates (orm_sensitivity, orm_specificity,
 *   grown by the problem's difficulty): 0.99 or 0.01 before the noise.
 * - `step`: 0.9 for a chunk perceived right, 0.1 for one perceived wrong, before the noise.
 * - `oracle`: the exact success probability after the step — the truth, not a model. Only under
 *   this name; a search steered by it is refused without `--allow-gold-judge` (docs/sim.md).
 *
 * Non-sim text: uniform in [0.05, 0.95].
 */
export function simPrmScores(
  question: string,
  steps: readonly string[],
  options: SimOptions,
  rng: Rng,
): number[] {
  const problem = lookupSimQuestion(question);
  if (!problem) return steps.map(() => 0.05 + 0.9 * rng.next());
  if (options.prmTarget === 'oracle') {
    return exactStepValues(problem, steps, options)
      .slice(1)
      .map((t) => noisyScore(t, options.prmNoise, rng));
  }
  const table = simValueTable(problem, options);
  const problemSteps = simSteps(problem, options);
  const truth = truthValues(problem);
  const ormRates = simOrmRates(problem, options);
  const rates = {
    sensitivity: options.prmSensitivity,
    specificity: options.prmSpecificity,
    judgeDifficulty: options.judgeDifficulty,
  };
  let state = initialSimState(problem);
  let believedWrong = false;
  // Each step's seed hashes the key of every step up to it; hashed incrementally (the same seed
  // as hashing the whole key each time, which made long solutions quadratic).
  let key = hashString(`${options.seed}|prm|${problem.question}`);
  const out: number[] = [];
  for (const chunk of steps) {
    key = hashStringFrom(key, `\u0000${chunk}`);
    const stepRng = createRng(key);
    const r = replayChunk(problem, state, chunk);
    const { sensitivity, specificity } = simJudgeRates(
      chunkDifficulty(problem, state, r.kind, problemSteps, options),
      rates,
    );
    const perceivedWrong = r.wrong ? stepRng.chance(sensitivity) : !stepRng.chance(specificity);
    if (options.prmTarget === 'step') {
      out.push(noisyScore(perceivedWrong ? 0.1 : 0.9, options.prmNoise, stepRng));
    } else if (r.state.phase === 'done') {
      const right = r.state.answer === truth[truth.length - 1];
      const saysRight = right ? stepRng.chance(ormRates.specificity) : !stepRng.chance(ormRates.sensitivity);
      out.push(noisyScore(saysRight ? 0.99 : 0.01, options.prmNoise, stepRng));
    } else {
      const corrects = r.kind === 'check' && r.state.value !== state.value;
      if (perceivedWrong) believedWrong = true;
      else if (corrects) believedWrong = false;
      const w = believedWrong ? 1 : 0;
      const k = Math.min(r.state.k, truth.length - 1);
      const v = r.state.phase === 'afterOp' ? table.afterOp[k][w] : table.ready[k][w];
      out.push(noisyScore(v, options.prmNoise, stepRng));
    }
    state = r.state;
  }
  return out;
}

/**
 * Reply of the outcome model: `\boxed{Correct}` or `\boxed{Incorrect}` for a whole solution.
 * P(Incorrect | final answer wrong) and P(Correct | right) are orm_sensitivity and
 * orm_specificity with their error rates grown by the problem's difficulty ({@link simOrmRates}).
 */
export function simOrmReply(question: string, solution: string, options: SimOptions, rng: Rng): string {
  return prepareSimOrmReply(question, solution, options)(rng);
}

/** {@link simOrmReply} in two parts: the solution is read once, each call draws one reply. */
export function prepareSimOrmReply(
  question: string,
  solution: string,
  options: SimOptions,
): (rng: Rng) => string {
  const problem = lookupSimQuestion(question);
  if (!problem)
    return (rng) => `${NOT_SIM}\n\n\\boxed{${rng.chance(GUESS_CORRECT) ? 'Correct' : 'Incorrect'}}`;
  const right = isSimSolutionCorrect(problem, solution);
  const rates = simOrmRates(problem, options);
  return (rng) => {
    const says = right ? rng.chance(rates.specificity) : !rng.chance(rates.sensitivity);
    return `Simulated outcome model: checked the final answer.\n\n\\boxed{${says ? 'Correct' : 'Incorrect'}}`;
  };
}
