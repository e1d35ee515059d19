import { StepwiseError } from '../core/errors.js';
import { createRng, type Rng } from '../core/rng.js';
import { parseWrittenTags, type Segmentation, splitParagraphs, writtenPrefix } from '../core/segment.js';
import { DEFAULT_SIM_OPTIONS, type SimOptions } from './options.js';
import {
  applyOp,
  describeOp,
  ERROR_OFFSETS,
  lookupSimQuestion,
  opSymbol,
  type SimOp,
  type SimProblem,
  type SimStep,
  simSteps,
  solveSimProblem,
  stepErrorProbabilities,
  truthValues,
} from './world.js';

/**
 * The simulated policy: a Markov chain over (operations done k, number so far, phase) that
 * writes one chunk per transition, and its exact value function.
 *
 * Chunk grammar (one chunk per paragraph, chunks joined by a blank line):
 * - restatement: `We start with 7.` (before the first operation) / `So far, the number is 12.`
 * - operation k: `Step k: multiply by 3. 12 × 3 = 36.` — wrong with probability p_k
 * - check: `Check: redoing the calculation from 7 gives 36, so the number is 36.` (confirm),
 *   `Check: the steps so far look right, so the number is 37.` (an error missed),
 *   `Check: redoing the calculation from 7 gives 36, not 37, so the number is 36.` (caught)
 * - final: `The final number is \boxed{36}.` (ends the solution)
 *
 * Transitions: from `ready` (k < H) a restatement with probability restate_rate, else
 * operation k; from `restated` operation k; after an operation a check with probability
 * check_rate, else as from `ready`; once k = H (and no check) the final chunk. A check on a
 * wrong number catches it with probability catch_rate; on a right number it raises a false
 * alarm (a new error) with probability false_alarm. A wrong number stays wrong through later
 * operations (they are computed correctly from it), so an error propagates until a check
 * catches it.
 *
 * Why the two-state value table is exact: the deviation d = number − right number never returns
 * to 0 except through a catching check. Correct operations keep it non-zero (d stays d under
 * add/subtract, becomes d·n under multiply by n ≥ 1); a new error adds an offset from ±1, ±2,
 * ±10, and an offset that would cancel the deviation is applied with the opposite sign instead
 * (d → 2d); a false alarm moves a right number off by a non-zero offset. The one exception is
 * `multiply by 0` (never generated, but a parsable question may contain it): it wipes out any
 * deviation, and the table accounts for it.
 */

/** Where the chain is between chunks. `ready` and `restated` differ only in that a restatement cannot follow a restatement. */
export type SimPhase = 'ready' | 'restated' | 'afterOp' | 'done';

export interface SimState {
  /** Operations done. */
  k: number;
  /** The number the solution currently holds (possibly wrong). */
  value: number;
  phase: SimPhase;
  /** The boxed answer, once the final chunk is written (NaN when it is not a number). */
  answer?: number;
}

export type SimChunkKind = 'restate' | 'op' | 'check' | 'final' | 'unknown';

/** One chunk replayed against the problem. */
export interface ReplayedChunk {
  kind: SimChunkKind;
  /**
   * True when the chunk introduces an error given the state before it (the definition every
   * simulated judge and label uses): an operation whose result is not the operation applied to
   * the previous number; a restatement or final answer that changes the number; a check that
   * changes the number to anything but the right one. Restatements, correct operations on a
   * (possibly wrong) previous number, checks that confirm, miss or catch, and unrecognised text
   * are right.
   */
  wrong: boolean;
  /** The state after the chunk. */
  state: SimState;
}

const BOXED_RE = /\\boxed\{([^{}]*)\}/g;
const CHECK_RE = /^Check:[\s\S]*the number is (-?\d+)\.?\s*$/;
const OP_RE = /(-?\d+) ([+×*-]) (-?\d+) = (-?\d+)/;
const RESTATE_RE = /(?:the number is|start with) (-?\d+)/i;

function lastBoxed(text: string): string | null {
  let last: string | null = null;
  for (const m of text.matchAll(BOXED_RE)) last = m[1];
  return last;
}

/** A problem, or its question text. */
export type SimProblemLike = SimProblem | string;

/** The problem of a question text (or the problem itself); throws StepwiseError when the text is not a sim question. */
export function asSimProblem(problem: SimProblemLike): SimProblem {
  if (typeof problem !== 'string') return problem;
  const p = lookupSimQuestion(problem);
  if (!p)
    throw new StepwiseError(`sim: not a simulated-world question: ${JSON.stringify(problem.slice(0, 80))}`);
  return p;
}

/** The initial state of a problem. */
export function initialSimState(problem: SimProblem): SimState {
  return { k: 0, value: problem.start, phase: 'ready' };
}

/**
 * Advance the state by one chunk of text (any text: unrecognised chunks change nothing). A
 * chunk of several lines (a self-segmented chunk groups a restatement, an operation and its
 * check, one per line) is replayed line by line: it is wrong when any line is, and its kind is
 * that of its last recognised line.
 */
export function replayChunk(problem: SimProblem, before: SimState, text: string): ReplayedChunk {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length <= 1) return replayLine(problem, before, text);
  let state = before;
  let wrong = false;
  let kind: SimChunkKind = 'unknown';
  for (const line of lines) {
    const r = replayLine(problem, state, line);
    wrong ||= r.wrong;
    if (r.kind !== 'unknown') kind = r.kind;
    state = r.state;
  }
  return { kind, wrong, state };
}

function replayLine(problem: SimProblem, before: SimState, text: string): ReplayedChunk {
  const H = problem.ops.length;
  if (before.phase === 'done') return { kind: 'unknown', wrong: false, state: before };
  const boxed = lastBoxed(text);
  if (boxed !== null) {
    const t = boxed.trim();
    const answer = /^-?\d+$/.test(t) ? Number.parseInt(t, 10) : Number.NaN;
    return { kind: 'final', wrong: answer !== before.value, state: { ...before, phase: 'done', answer } };
  }
  const check = CHECK_RE.exec(text);
  if (check) {
    const v = Number.parseInt(check[1], 10);
    const truth = truthValues(problem)[before.k];
    const wrong = v !== before.value && v !== truth;
    return { kind: 'check', wrong, state: { k: before.k, value: v, phase: 'restated' } };
  }
  const op = OP_RE.exec(text);
  if (op) {
    const result = Number.parseInt(op[4], 10);
    if (before.k >= H) {
      // An operation beyond the problem: wrong iff it changes the number.
      return {
        kind: 'op',
        wrong: result !== before.value,
        state: { ...before, value: result, phase: 'afterOp' },
      };
    }
    const expected = applyOp(before.value, problem.ops[before.k]);
    return {
      kind: 'op',
      wrong: result !== expected,
      state: { k: before.k + 1, value: result, phase: 'afterOp' },
    };
  }
  const restate = RESTATE_RE.exec(text);
  if (restate) {
    const v = Number.parseInt(restate[1], 10);
    return {
      kind: 'restate',
      wrong: v !== before.value,
      state: { k: before.k, value: v, phase: 'restated' },
    };
  }
  return { kind: 'unknown', wrong: false, state: before };
}

/** Replay whole chunks from the start: one entry per chunk, and the final state. */
export function replaySimChunks(
  problem: SimProblem,
  chunks: readonly string[],
): { chunks: ReplayedChunk[]; state: SimState } {
  let state = initialSimState(problem);
  const out: ReplayedChunk[] = [];
  for (const c of chunks) {
    const r = replayChunk(problem, state, c);
    out.push(r);
    state = r.state;
  }
  return { chunks: out, state };
}

/** Index of the first chunk that introduces an error (see {@link ReplayedChunk.wrong}), −1 if none. */
export function firstWrongStep(problem: SimProblemLike, chunks: readonly string[]): number {
  return replaySimChunks(asSimProblem(problem), chunks).chunks.findIndex((c) => c.wrong);
}

/** Per chunk: does it introduce an error? */
export function wrongChunks(problem: SimProblemLike, chunks: readonly string[]): boolean[] {
  return replaySimChunks(asSimProblem(problem), chunks).chunks.map((c) => c.wrong);
}

/**
 * Chunks of a prefix or solution text: its `<chunk>`s when it has tags (the closed ones: an
 * unfinished chunk at the end is not a chunk yet), else its blank-line paragraphs (trimmed).
 */
export function simChunksOf(text: string): string[] {
  if (text.includes('<chunk>')) return parseWrittenTags(text).chunks.map((c) => c.text);
  return splitParagraphs(text).map((c) => c.text);
}

/** Whether a full solution text ends with the right boxed answer. */
export function isSimSolutionCorrect(problem: SimProblem, text: string): boolean {
  const b = lastBoxed(text);
  return b !== null && b.trim() === String(solveSimProblem(problem));
}

type PolicyOptions = Pick<
  SimOptions,
  | 'stepError'
  | 'difficultySpread'
  | 'misconception'
  | 'recur'
  | 'checkRate'
  | 'catchRate'
  | 'falseAlarm'
  | 'restateRate'
>;

/**
 * The exact value table: `ready[k][w]` and `afterOp[k][w]` = probability of finishing with the
 * right answer from k operations done, w = 1 when the number is wrong.
 *
 *   R(H, w) = 1 − w
 *   R(k, 0) = (1 − p_k)·C(k+1, 0) + p_k·C(k+1, 1),   R(k, 1) = C(k+1, 1)      (k < H)
 *   (R(k, 1) = R(k, 0) when operation k is `multiply by 0`, which makes any number right)
 *   C(k, 0) = c·[(1 − f)·R(k, 0) + f·R(k, 1)] + (1 − c)·R(k, 0)
 *   C(k, 1) = c·[q·R(k, 0) + (1 − q)·R(k, 1)] + (1 − c)·R(k, 1)
 *
 * with c = check_rate, q = catch_rate, f = false_alarm. A restatement does not change the
 * value (R is the same in `ready` and `restated`).
 */
export function simValueTable(
  problem: SimProblem,
  options: PolicyOptions,
): { ready: number[][]; afterOp: number[][] } {
  const H = problem.ops.length;
  const p = stepErrorProbabilities(problem, options);
  const c = options.checkRate;
  const q = options.catchRate;
  const f = options.falseAlarm;
  const ready: number[][] = new Array(H + 1);
  const afterOp: number[][] = new Array(H + 1);
  const fill = (k: number): void => {
    const r0 = ready[k][0];
    const r1 = ready[k][1];
    afterOp[k] = [c * ((1 - f) * r0 + f * r1) + (1 - c) * r0, c * (q * r0 + (1 - q) * r1) + (1 - c) * r1];
  };
  ready[H] = [1, 0];
  fill(H);
  for (let k = H - 1; k >= 0; k--) {
    const r0 = (1 - p[k]) * afterOp[k + 1][0] + p[k] * afterOp[k + 1][1];
    ready[k] = [r0, annihilates(problem.ops[k]) ? r0 : afterOp[k + 1][1]];
    fill(k);
  }
  return { ready, afterOp };
}

/** Whether an operation maps every number to the same result (`multiply by 0`), so a wrong number becomes right. */
function annihilates(op: SimOp): boolean {
  return op.kind === 'multiply' && op.operand === 0;
}

/** Exact success probability of the policy from a state. */
export function simStateValue(problem: SimProblem, options: PolicyOptions, state: SimState): number {
  if (state.phase === 'done') return state.answer === solveSimProblem(problem) ? 1 : 0;
  const truth = truthValues(problem)[state.k];
  const w = state.value === truth ? 0 : 1;
  const table = simValueTable(problem, options);
  return state.phase === 'afterOp' ? table.afterOp[state.k][w] : table.ready[state.k][w];
}

/**
 * Exact probability that the policy finishes correctly when it continues after these chunks
 * (computed from the Markov chain, not sampled). `exactValue(p, [])` is the problem's success rate.
 */
export function exactValue(
  problem: SimProblemLike,
  prefixChunks: readonly string[],
  options: PolicyOptions = DEFAULT_SIM_OPTIONS,
): number {
  const p = asSimProblem(problem);
  return simStateValue(p, options, replaySimChunks(p, prefixChunks).state);
}

/** Exact values of every prefix of a solution: index 0 = empty prefix, i = after chunk i−1 (length chunks + 1). */
export function exactStepValues(
  problemLike: SimProblemLike,
  chunks: readonly string[],
  options: PolicyOptions = DEFAULT_SIM_OPTIONS,
): number[] {
  const problem = asSimProblem(problemLike);
  const table = simValueTable(problem, options);
  const truth = truthValues(problem);
  const gold = truth[truth.length - 1];
  const stateValue = (s: SimState): number => {
    if (s.phase === 'done') return s.answer === gold ? 1 : 0;
    const w = s.value === truth[s.k] ? 0 : 1;
    return s.phase === 'afterOp' ? table.afterOp[s.k][w] : table.ready[s.k][w];
  };
  let state = initialSimState(problem);
  const out = [stateValue(state)];
  for (const c of chunks) {
    state = replayChunk(problem, state, c).state;
    out.push(stateValue(state));
  }
  return out;
}

/** The policy's success rate on a problem (exact value of the empty prefix). */
export function simSuccessRate(
  problem: SimProblemLike,
  options: PolicyOptions = DEFAULT_SIM_OPTIONS,
): number {
  return exactValue(problem, [], options);
}

/**
 * The offset a new error adds to a result whose deviation from the right number is `deviation`:
 * a uniform pick from {@link ERROR_OFFSETS} (a trap step's misconception: its fixed offset), except that an offset that would cancel the deviation is
 * applied with the opposite sign (the deviation doubles). So an error never lands on the right
 * number — only a catching check restores it — which is what keeps {@link simValueTable} exact.
 * Mirroring (rather than redrawing) consumes the same random draws, so every solution without a
 * would-be cancellation is unchanged.
 */
function errorOffset(deviation: number, rng: Rng, misconception?: number): number {
  const e = misconception ?? rng.pick(ERROR_OFFSETS);
  return deviation + e === 0 ? -e : e;
}

function opChunk(problem: SimProblem, k: number, a: number, result: number): string {
  const op = problem.ops[k];
  return `Step ${k + 1}: ${describeOp(op)}. ${a} ${opSymbol(op.kind)} ${op.operand} = ${result}.`;
}

/**
 * Write the next chunk from a state; null once the solution is finished. Uses the same
 * transition probabilities as {@link simValueTable}.
 */
export function sampleNextChunk(
  problem: SimProblem,
  options: PolicyOptions,
  state: SimState,
  rng: Rng,
  steps: readonly SimStep[] = simSteps(problem, options),
): { text: string; state: SimState } | null {
  const H = problem.ops.length;
  if (state.phase === 'done') return null;
  const { k, value } = state;
  if (state.phase === 'afterOp' && rng.chance(options.checkRate)) {
    const truth = truthValues(problem)[k];
    const start = problem.start;
    if (value !== truth) {
      if (rng.chance(options.catchRate)) {
        const text = `Check: redoing the calculation from ${start} gives ${truth}, not ${value}, so the number is ${truth}.`;
        return { text, state: { k, value: truth, phase: 'restated' } };
      }
      return {
        text: `Check: the steps so far look right, so the number is ${value}.`,
        state: { k, value, phase: 'restated' },
      };
    }
    if (options.falseAlarm > 0 && rng.chance(options.falseAlarm)) {
      const x = value + rng.pick(ERROR_OFFSETS);
      const text = `Check: redoing the calculation from ${start} gives ${x}, not ${value}, so the number is ${x}.`;
      return { text, state: { k, value: x, phase: 'restated' } };
    }
    const text = `Check: redoing the calculation from ${start} gives ${value}, so the number is ${value}.`;
    return { text, state: { k, value, phase: 'restated' } };
  }
  if (k >= H)
    return {
      text: `The final number is \\boxed{${value}}.`,
      state: { k, value, phase: 'done', answer: value },
    };
  if (state.phase !== 'restated' && rng.chance(options.restateRate)) {
    const text = k === 0 ? `We start with ${value}.` : `So far, the number is ${value}.`;
    return { text, state: { k, value, phase: 'restated' } };
  }
  let result = applyOp(value, problem.ops[k]);
  const step = steps[k];
  if (rng.chance(step.errorProbability))
    result += errorOffset(
      result - truthValues(problem)[k + 1],
      rng,
      step.trap ? step.misconceptionOffset : undefined,
    );
  return { text: opChunk(problem, k, value, result), state: { k: k + 1, value: result, phase: 'afterOp' } };
}

/** Sample chunks from a state until the solution ends. */
export function sampleSimChunks(
  problem: SimProblem,
  options: PolicyOptions,
  state: SimState,
  rng: Rng,
  steps: readonly SimStep[] = simSteps(problem, options),
): string[] {
  const out: string[] = [];
  let s = state;
  // The chain always ends: every path reaches k = H within 3 chunks per operation.
  for (;;) {
    const next = sampleNextChunk(problem, options, s, rng, steps);
    if (!next) return out;
    out.push(next.text);
    s = next.state;
  }
}

/** One full solution (chunks) sampled from scratch. */
export function sampleSimSolution(
  problemLike: SimProblemLike,
  options: PolicyOptions,
  rng: Rng | number,
): string[] {
  const problem = asSimProblem(problemLike);
  const r = typeof rng === 'number' ? createRng(rng) : rng;
  return sampleSimChunks(problem, options, initialSimState(problem), r);
}

/**
 * The policy's continuation of a prefix text: the prefix is split into chunks (blank lines, or
 * `<chunk>` tags), replayed to recover the state, then the rest is sampled. A non-empty prefix
 * that does not end in a blank line is treated as ending a chunk, and the continuation starts
 * with the missing separator.
 *
 * Under `tags` the policy self-segments: the same chain of steps is sampled (so accuracy is the
 * same), but a restatement, the operation it sets up and a check of that operation form one
 * chunk (one line each), the final answer its own; `text` is the chunks in `<chunk>` tags.
 */
export function continueSimPrefix(
  problem: SimProblem,
  options: PolicyOptions,
  prefix: string,
  rng: Rng,
  segmentation: Segmentation = 'paragraph',
): SimContinuation {
  return prepareSimContinuation(problem, options, prefix, segmentation)(rng);
}

/** What {@link continueSimPrefix} writes. */
export interface SimContinuation {
  /** Separator written before the first new chunk ('' when the prefix ends in a blank line). */
  lead: string;
  chunks: string[];
  /** The continuation as written: lead, then the chunks in the segmentation's form. */
  text: string;
}

/**
 * {@link continueSimPrefix} in two parts: the prefix is read (replayed) once here, and each call
 * of the returned function samples one continuation — so n samples of one request cost one
 * replay, not n.
 */
export function prepareSimContinuation(
  problem: SimProblem,
  options: PolicyOptions,
  prefix: string,
  segmentation: Segmentation = 'paragraph',
): (rng: Rng) => SimContinuation {
  const state = replaySimChunks(problem, simChunksOf(prefix)).state;
  const steps = simSteps(problem, options);
  if (segmentation === 'tags') {
    const endsInSpace = prefix.trim() === '' || /\s$/.test(prefix);
    return (rng) => {
      const chunks = sampleSimTaggedChunks(problem, options, state, rng, steps);
      const lead = chunks.length === 0 || endsInSpace ? '' : '\n';
      return { lead, chunks, text: lead + writtenPrefix(chunks, 'tags') };
    };
  }
  const separator = separatorAfter(prefix);
  return (rng) => {
    const chunks = sampleSimChunks(problem, options, state, rng, steps);
    const lead = chunks.length === 0 ? '' : separator;
    return { lead, chunks, text: lead + chunks.join('\n\n') };
  };
}

/**
 * Sample until the solution ends, grouping steps into self-segmented chunks: a restatement
 * opens a chunk the next operation joins, a check joins the operation it checks, and the final
 * answer is a chunk of its own. The steps (and random draws) are those of {@link sampleSimChunks}.
 */
export function sampleSimTaggedChunks(
  problem: SimProblem,
  options: PolicyOptions,
  state: SimState,
  rng: Rng,
  steps: readonly SimStep[] = simSteps(problem, options),
): string[] {
  const out: string[] = [];
  let group: string[] = [];
  let last: SimChunkKind = 'unknown';
  let s = state;
  for (;;) {
    const next = sampleNextChunk(problem, options, s, rng, steps);
    if (!next) break;
    const kind: SimChunkKind =
      next.state.phase === 'done'
        ? 'final'
        : next.state.phase === 'afterOp'
          ? 'op'
          : next.text.startsWith('Check:')
            ? 'check'
            : 'restate';
    const joins = (kind === 'op' && last === 'restate') || (kind === 'check' && last === 'op');
    if (!joins && group.length > 0) {
      out.push(group.join('\n'));
      group = [];
    }
    group.push(next.text);
    last = kind;
    s = next.state;
  }
  if (group.length > 0) out.push(group.join('\n'));
  return out;
}

/** What must follow `prefix` before a new chunk starts. */
export function separatorAfter(prefix: string): string {
  if (prefix.trim() === '' || /\n[ \t\r]*\n[ \t\r]*$/.test(prefix)) return '';
  return /\n[ \t\r]*$/.test(prefix) ? '\n' : '\n\n';
}
