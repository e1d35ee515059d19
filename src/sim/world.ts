import { createRng, hashString, type Rng } from '../core/rng.js';
import type { Problem } from '../core/types.js';
import type { SimOptions } from './options.js';

/**
 * The problems of the simulated world: a start number and a chain of operations, written as a
 * self-contained question ("Start with 7. Add 5, then multiply by 3. What is the final
 * number?"). Everything about a problem — including its difficulty — is a function of the
 * question text alone, so a stateless server recovers it from any request.
 */

export type SimOpKind = 'add' | 'subtract' | 'multiply';

export interface SimOp {
  kind: SimOpKind;
  operand: number;
}

export interface SimProblem {
  start: number;
  ops: SimOp[];
  /** The question text (the only thing a request carries). */
  question: string;
}

const QUESTION_RE = /^Start with (-?\d+)\. (.+)\. What is the final number\?$/;
const OP_RE = /^(add|subtract|multiply by) (\d+)$/i;

function opPhrase(op: SimOp): string {
  return op.kind === 'multiply' ? `multiply by ${op.operand}` : `${op.kind} ${op.operand}`;
}

/** Short description of an operation, e.g. `multiply by 3`. */
export function describeOp(op: SimOp): string {
  return opPhrase(op);
}

/** The question text of a problem. */
export function renderSimQuestion(start: number, ops: readonly SimOp[]): string {
  const phrases = ops.map(opPhrase);
  phrases[0] = phrases[0][0].toUpperCase() + phrases[0].slice(1);
  return `Start with ${start}. ${phrases.join(', then ')}. What is the final number?`;
}

/**
 * Whether every number the policy could hold on this problem — right or off by errors (each at
 * most 10, plus at most 10 from a false alarm, per operation) — is a safe integer. Beyond 2^53
 * an off-by-one result can round to the right number, which would break the exact values.
 */
function numbersStaySafe(start: number, ops: readonly SimOp[]): boolean {
  let bound = Math.abs(start);
  for (const op of ops) {
    if (!Number.isSafeInteger(op.operand)) return false;
    bound = (op.kind === 'multiply' ? bound * op.operand : bound + op.operand) + 20;
    if (!(bound <= Number.MAX_SAFE_INTEGER)) return false;
  }
  return Number.isSafeInteger(start);
}

/**
 * Most operations a question of the simulated world may have. The world writes at most 40
 * (`max_steps`); a longer question (a hostile request: 20,000 operations once held `sim serve`
 * for minutes) is not a sim question, and the sim model refuses it by name
 * ({@link simQuestionOverLimit}).
 */
export const SIM_MAX_OPERATIONS = 1000;

/** Operations of a text shaped like a sim question (`Start with …`), null for other text; linear, no parsing. */
function operationCount(question: string): number | null {
  const t = question.trimStart();
  if (!t.startsWith('Start with ')) return null;
  let count = 1;
  for (let at = t.indexOf(', then '); at >= 0; at = t.indexOf(', then ', at + 7)) count++;
  return count;
}

/**
 * The operation count of a text that is shaped like a sim question but has more than
 * {@link SIM_MAX_OPERATIONS} operations; null otherwise. What the sim model's refusal names.
 */
export function simQuestionOverLimit(question: string): number | null {
  const n = operationCount(question);
  return n !== null && n > SIM_MAX_OPERATIONS ? n : null;
}

/**
 * Recover a problem from its question text; null when the text is not a sim question (including
 * a question whose numbers could grow beyond the safe-integer range, or with more than
 * {@link SIM_MAX_OPERATIONS} operations).
 */
export function parseSimQuestion(question: string): SimProblem | null {
  if (simQuestionOverLimit(question) !== null) return null;
  const m = QUESTION_RE.exec(question.trim());
  if (!m) return null;
  const ops: SimOp[] = [];
  for (const phrase of m[2].split(', then ')) {
    const o = OP_RE.exec(phrase);
    if (!o) return null;
    const word = o[1].toLowerCase();
    const kind: SimOpKind = word === 'add' ? 'add' : word === 'subtract' ? 'subtract' : 'multiply';
    ops.push({ kind, operand: Number.parseInt(o[2], 10) });
  }
  const start = Number.parseInt(m[1], 10);
  if (!numbersStaySafe(start, ops)) return null;
  return { start, ops, question: question.trim() };
}

const cache = new Map<string, SimProblem | null>();
/** Characters of the questions the memo holds: bounded by size as well as count (questions can be long). */
let cachedChars = 0;
const CACHE_MAX_CHARS = 16 << 20;

/** {@link parseSimQuestion} with a small memo (servers see the same question many times). */
export function lookupSimQuestion(question: string): SimProblem | null {
  let p = cache.get(question);
  if (p === undefined) {
    p = parseSimQuestion(question);
    if (cache.size > 50_000 || cachedChars + question.length > CACHE_MAX_CHARS) {
      cache.clear();
      cachedChars = 0;
    }
    cache.set(question, p);
    cachedChars += question.length;
  }
  return p;
}

/** Apply one operation. */
export function applyOp(value: number, op: SimOp): number {
  switch (op.kind) {
    case 'add':
      return value + op.operand;
    case 'subtract':
      return value - op.operand;
    case 'multiply':
      return value * op.operand;
  }
}

/** The symbol an operation is written with in a solution. */
export function opSymbol(kind: SimOpKind): string {
  return kind === 'add' ? '+' : kind === 'subtract' ? '-' : '×';
}

const truths = new WeakMap<SimProblem, readonly number[]>();

/**
 * The right number after each number of operations: `truth[k]` after k operations (truth[0] =
 * start). Computed once per problem object: callers index it once per chunk, and recomputing it
 * each time made a solution's replay quadratic in its operations.
 */
export function truthValues(problem: SimProblem): readonly number[] {
  let out = truths.get(problem);
  if (!out || out.length !== problem.ops.length + 1 || out[0] !== problem.start) {
    const values = [problem.start];
    for (const op of problem.ops) values.push(applyOp(values[values.length - 1], op));
    out = Object.freeze(values);
    truths.set(problem, out);
  }
  return out;
}

/** The gold answer: the number after all operations. */
export function solveSimProblem(problem: SimProblem): number {
  const t = truthValues(problem);
  return t[t.length - 1];
}

/** Relative difficulty weight of an operation kind (multiplications are the hardest). */
export const OP_WEIGHT: Readonly<Record<SimOpKind, number>> = { add: 0.75, subtract: 1, multiply: 1.25 };

/**
 * The problem's difficulty factor: exp(s·(2u−1)) / E, with u ∈ [0, 1) from a hash of the
 * question and E = sinh(s)/s the mean over u, so the mean factor over problems is 1.
 */
export function simDifficulty(problem: SimProblem, options: Pick<SimOptions, 'difficultySpread'>): number {
  const s = options.difficultySpread;
  if (s === 0) return 1;
  const u = hashString(`difficulty:${problem.question}`) / 4294967296;
  return Math.exp(s * (2 * u - 1)) / (Math.sinh(s) / s);
}

/** The offsets a policy error adds to a result (never 0, so an error on a right number makes it wrong). */
export const ERROR_OFFSETS: readonly number[] = [-10, -2, -1, 1, 2, 10];

/** How the policy errs on each operation of a problem (see {@link simSteps}). */
export interface SimStep {
  /** Step difficulty δ_k = difficulty × weight(op_k): mean about 1; judges err more on hard steps. */
  difficulty: number;
  /** The step-error rate before misconceptions: min(0.95, step_error × δ_k). */
  rate: number;
  /** Whether the step is a trap: the policy holds a misconception about it. */
  trap: boolean;
  /** P(this operation is done wrong) each time it is sampled: `recur` on a trap, the slip rate otherwise. */
  errorProbability: number;
  /** The offset of the misconception (a trap's error always adds it, so it recurs as the same wrong number). */
  misconceptionOffset: number;
}

/** Uniform in [0, 1) from a label: the world's per-problem draws, a function of the question text alone. */
function unit(label: string): number {
  return hashString(label) / 4294967296;
}

/**
 * Per operation: its difficulty, whether it is a trap, and its error probability. With r_k =
 * min(0.95, step_error × δ_k), μ = misconception and ρ = recur, operation k is a trap with
 * probability t_k = min(1, μ·r_k/ρ) (a hash of the question and k), and then erred with
 * probability ρ; otherwise with the slip rate (r_k − t_k·ρ)/(1 − t_k). Over the trap draw the
 * mean error probability is r_k, but errors recur: a trap step is wrong on most resamples, always
 * to the same number. The probabilities are a function of the problem alone, so exact values stay exact.
 */
export function simSteps(
  problem: SimProblem,
  options: Pick<SimOptions, 'stepError' | 'difficultySpread' | 'misconception' | 'recur'>,
): SimStep[] {
  const d = simDifficulty(problem, options);
  const rho = options.recur;
  return problem.ops.map((op, k) => {
    const difficulty = d * OP_WEIGHT[op.kind];
    const rate = Math.min(0.95, options.stepError * difficulty);
    const t = rho > 0 ? Math.min(1, (options.misconception * rate) / rho) : 0;
    const trap = t > 0 && unit(`trap:${k}:${problem.question}`) < t;
    const slip = t >= 1 ? 0 : Math.max(0, (rate - t * rho) / (1 - t));
    const misconceptionOffset =
      ERROR_OFFSETS[Math.floor(unit(`misconception:${k}:${problem.question}`) * ERROR_OFFSETS.length)];
    return { difficulty, rate, trap, errorProbability: trap ? rho : slip, misconceptionOffset };
  });
}

/**
 * Per-operation error probabilities (each time the operation is sampled): `recur` on trap steps,
 * the slip rate elsewhere (see {@link simSteps}). They are the policy's only source of new errors
 * in operation chunks.
 */
export function stepErrorProbabilities(
  problem: SimProblem,
  options: Pick<SimOptions, 'stepError' | 'difficultySpread' | 'misconception' | 'recur'>,
): number[] {
  return simSteps(problem, options).map((s) => s.errorProbability);
}

/** Draw one problem. */
export function generateSimProblem(rng: Rng, options: Pick<SimOptions, 'minSteps' | 'maxSteps'>): SimProblem {
  const steps = rng.int(options.minSteps, options.maxSteps);
  const start = rng.int(2, 20);
  let value = start;
  const ops: SimOp[] = [];
  for (let i = 0; i < steps; i++) {
    const r = rng.next();
    let op: SimOp;
    if (r < 0.3 && Math.abs(value) < 5000) op = { kind: 'multiply', operand: rng.int(2, 5) };
    else if (r < 0.6 && value > 4) op = { kind: 'subtract', operand: rng.int(2, Math.min(20, value - 1)) };
    else op = { kind: 'add', operand: rng.int(2, 20) };
    ops.push(op);
    value = applyOp(value, op);
  }
  return { start, ops, question: renderSimQuestion(start, ops) };
}

/** Options for generating a problem set. */
export interface SimProblemSetOptions {
  count: number;
  seed?: number;
  minSteps?: number;
  maxSteps?: number;
}

/** `count` problems from a seed (the same seed always gives the same problems). */
export function generateSimProblems(options: SimProblemSetOptions): SimProblem[] {
  return [...simProblemSequence(options)];
}

/** {@link generateSimProblems} one problem at a time (the same problems, made as they are asked for). */
export function* simProblemSequence(options: SimProblemSetOptions): Generator<SimProblem> {
  const rng = createRng(`sim-problems:${options.seed ?? 0}`);
  const range = { minSteps: options.minSteps ?? 3, maxSteps: options.maxSteps ?? 12 };
  for (let i = 0; i < options.count; i++) yield generateSimProblem(rng, range);
}

/** A sim problem as a data-set `Problem` (source `sim`, answer the gold number as text). */
export function toProblem(problem: SimProblem, id: string): Problem {
  return {
    id,
    question: problem.question,
    answer: String(solveSimProblem(problem)),
    domain: 'math',
    source: 'sim',
    meta: { steps: problem.ops.length, simulated: true },
  };
}

/**
 * Sim problems as data-set problems, ids `sim/<seed>/<i>`: what a `sim` data set loader
 * returns. `meta.successRate` (the policy's exact success rate under `options`) is added when
 * options are given.
 */
export function loadSimProblems(
  options: SimProblemSetOptions & { successRate?: (p: SimProblem) => number },
): Problem[] {
  const seed = options.seed ?? 0;
  return generateSimProblems(options).map((p, i) => {
    const out = toProblem(p, `sim/${seed}/${i}`);
    if (options.successRate) out.meta = { ...out.meta, successRate: options.successRate(p) };
    return out;
  });
}
