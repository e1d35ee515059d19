import { LABEL_SIGNAL_NAMES } from '../data/record-kinds.js';

/**
 * Step labels from Monte Carlo step values (METHODS §2): pure functions over Q̂(0..H).
 *
 * Indexing: `q[0]` is Q̂ of the empty prefix (the bare problem); `q[i]` (1 ≤ i ≤ H) is Q̂ of
 * the prefix that ends after chunk i (1-based, as in the papers). Label arrays are indexed by
 * chunk from 0, as ProcessBench indexes steps: `labels[i - 1]` is the label of chunk i, and a
 * first error is a 0-based chunk index (−1 when none).
 */

/** The rollout label signals, by name (the `--signals` values), as label rows declare them (src/data/record-kinds.ts). */
export const LABEL_SIGNALS = LABEL_SIGNAL_NAMES;

export type LabelSignal = (typeof LABEL_SIGNALS)[number];

/**
 * Signals whose label depends only on whether any rollout from the chunk's prefix is correct
 * (Q̂(i) > 0). They can stop sampling at the first correct rollout and be searched by bisection.
 */
export const ANY_CORRECT_SIGNALS: readonly LabelSignal[] = ['abs-q', 'ms-hard', 'sorm'];

/**
 * Rollouts per prefix each signal's paper uses: StepWiser M = 16 (Abs-Q, Rel-Ratio,
 * Rel-Effective), Math-Shepherd N = 8 (hard and soft), SORM K = 8 (GLoRe, second-hand).
 */
export const PAPER_ROLLOUTS: Readonly<Record<LabelSignal, number>> = Object.freeze({
  'abs-q': 16,
  'rel-ratio': 16,
  'rel-effective': 16,
  'ms-hard': 8,
  'ms-soft': 8,
  sorm: 8,
});

/**
 * The default rollouts per prefix for a set of signals labelled from the same rollouts: the
 * largest any of them uses in its paper (16 as soon as a StepWiser signal is asked, else 8).
 */
export function defaultRollouts(signals: readonly LabelSignal[]): number {
  return signals.length === 0 ? 16 : Math.max(...signals.map((s) => PAPER_ROLLOUTS[s]));
}

/** How Rel-Ratio treats Q̂(i) = Q̂(i−1) = 0 (the paper does not say). */
export type ZeroOverZero = 'negative' | 'no-change';

/** Parameters of the signals; defaults follow the papers' 1.5B settings. */
export interface SignalParams {
  /** Rel-Ratio threshold γ: positive iff Q̂(i)/Q̂(i−1) > γ. Default 0.8. */
  gamma: number;
  /** Rel-Effective weight α on the best-of-n advantage. Default 0.4. */
  alpha: number;
  /** Rel-Effective best-of-n prover size n. Default 4. */
  bestOfN: number;
  /** Math-Shepherd soft label: a chunk counts as positive (for its first error) iff Q̂(i) ≥ this. Default 0.5. */
  softThreshold: number;
  /**
   * Rel-Ratio when Q̂(i) = Q̂(i−1) = 0. `negative` (default): nothing is solvable after the
   * chunk, so it is not a good step — this keeps Rel-Ratio at least as strict as Abs-Q (every
   * Q̂(i) = 0 chunk is negative under both). `no-change`: read 0/0 as ratio 1 (the chunk changed
   * nothing), positive iff 1 > γ.
   */
  zeroOverZero: ZeroOverZero;
}

export const DEFAULT_SIGNAL_PARAMS: Readonly<SignalParams> = Object.freeze({
  gamma: 0.8,
  alpha: 0.4,
  bestOfN: 4,
  softThreshold: 0.5,
  zeroOverZero: 'negative',
});

/**
 * Comparisons of estimates against thresholds tolerate float rounding: Q̂ values are fractions
 * k/M, so a ratio that equals γ exactly (e.g. 4/5 against γ = 0.8) must count as "not greater".
 */
const EPS = 1e-12;

function checkQ(q: readonly number[]): void {
  if (q.length < 1) throw new RangeError('q must hold at least Q̂(0), the empty prefix value');
  for (let i = 0; i < q.length; i++) {
    const v = q[i];
    if (typeof v !== 'number' || Number.isNaN(v) || v < 0 || v > 1) {
      throw new RangeError(`q[${i}] = ${String(v)} is not a value in [0, 1]`);
    }
  }
}

/** Abs-Q: chunk i is positive iff Q̂(i) > 0 (some rollout after it reaches the correct answer). */
export function absQLabels(q: readonly number[]): boolean[] {
  checkQ(q);
  return q.slice(1).map((v) => v > 0);
}

/**
 * Rel-Ratio (StepWiser): chunk i is positive iff Q̂(i)/Q̂(i−1) > γ. Chunk 1 compares with Q̂(0).
 * When Q̂(i−1) = 0: Q̂(i) > 0 is an infinite ratio (positive); Q̂(i) = 0 is the 0/0 case, decided
 * by `zeroOverZero`. A ratio equal to γ is negative.
 */
export function relRatioLabels(
  q: readonly number[],
  gamma: number = DEFAULT_SIGNAL_PARAMS.gamma,
  zeroOverZero: ZeroOverZero = DEFAULT_SIGNAL_PARAMS.zeroOverZero,
): boolean[] {
  checkQ(q);
  const out: boolean[] = [];
  for (let i = 1; i < q.length; i++) out.push(relRatioLabel(q[i - 1], q[i], gamma, zeroOverZero));
  return out;
}

/** Rel-Ratio's label of one chunk from Q̂(i − 1) and Q̂(i) (see {@link relRatioLabels}). */
export function relRatioLabel(prev: number, cur: number, gamma: number, zeroOverZero: ZeroOverZero): boolean {
  if (prev === 0) return cur > 0 ? true : zeroOverZero === 'no-change' && 1 > gamma;
  // cur / prev > γ, written without division so exact ties stay ties.
  return cur - gamma * prev > EPS * Math.max(1, Math.abs(gamma));
}

/** Best-of-n prover value Q_μ = 1 − (1 − Q̂)^n. */
export function bestOfNValue(q: number, n: number): number {
  return 1 - (1 - q) ** n;
}

/**
 * Rel-Effective (StepWiser, after Setlur et al.): A_μ(i) = Q_μ(i) − Q_μ(i−1) with
 * Q_μ = 1 − (1 − Q̂)^n; chunk i is positive iff Q̂(i) + α·A_μ(i) > 0, otherwise negative.
 * Chunk 1 uses Q_μ(0) from the empty prefix. Q̂(i) = 0 is always negative (A_μ ≤ 0 then).
 */
export function relEffectiveLabels(
  q: readonly number[],
  alpha: number = DEFAULT_SIGNAL_PARAMS.alpha,
  bestOfN: number = DEFAULT_SIGNAL_PARAMS.bestOfN,
): boolean[] {
  checkQ(q);
  const out: boolean[] = [];
  for (let i = 1; i < q.length; i++) out.push(effectiveReward(q[i - 1], q[i], alpha, bestOfN) > EPS);
  return out;
}

/** Rel-Effective's quantity for one chunk: Q̂(i) + α·A_μ(i), A_μ(i) = Q_μ(i) − Q_μ(i−1). */
export function effectiveReward(prev: number, cur: number, alpha: number, bestOfN: number): number {
  const advantage = bestOfNValue(cur, bestOfN) - bestOfNValue(prev, bestOfN);
  return cur + alpha * advantage;
}

/**
 * Math-Shepherd hard label: 1 iff any of the rollouts from the chunk's prefix is correct, which
 * for the same rollouts is exactly Q̂(i) > 0 (the same labels as Abs-Q).
 */
export function msHardLabels(q: readonly number[]): boolean[] {
  return absQLabels(q);
}

/** Math-Shepherd soft label: Q̂(i) itself, kept as a number (exports write it as is). */
export function msSoftLabels(q: readonly number[]): number[] {
  checkQ(q);
  return q.slice(1);
}

/**
 * SORM backward propagation (GLoRe): if chunk i is positive then every earlier chunk is positive
 * (a prefix that can still reach the answer was reached by good steps). The result is all
 * positive up to the last positive chunk and negative after it.
 */
export function propagatePositivesBackward(labels: readonly boolean[]): boolean[] {
  const last = labels.lastIndexOf(true);
  return labels.map((_, i) => i <= last);
}

/**
 * SORM (GLoRe): chunk i is positive iff at least one rollout from its prefix reaches the
 * correct answer (Q̂(i) > 0), then positives propagate backward. Per-prefix-length balancing is a
 * data-set level step: {@link balanceByPrefixLength}.
 */
export function sormLabels(q: readonly number[]): boolean[] {
  return propagatePositivesBackward(absQLabels(q));
}

/** Index of the first negative label (0-based chunk index), −1 when every chunk is positive. */
export function firstNegative(labels: readonly boolean[]): number {
  return labels.indexOf(false);
}

/** A chunk's label: a verdict (true = positive) or, for `ms-soft`, the soft value Q̂(i). */
export type LabelValue = boolean | number;

/** A label as a verdict: soft labels are positive at ≥ `softThreshold`. */
export function isPositiveLabel(
  value: LabelValue,
  softThreshold: number = DEFAULT_SIGNAL_PARAMS.softThreshold,
): boolean {
  return typeof value === 'number' ? value >= softThreshold - EPS : value;
}

/**
 * The soft threshold a `stepwise label` record was labelled with (`job.settings.softThreshold`,
 * recorded on every row), so readers turn its `ms-soft` values into verdicts and first errors as
 * the label run did; the default when the row does not say.
 */
export function softThresholdOf(record: unknown): number {
  const job = (record as { job?: { settings?: { softThreshold?: unknown } } } | null)?.job;
  const t = job?.settings?.softThreshold;
  return typeof t === 'number' && t >= 0 && t <= 1 ? t : DEFAULT_SIGNAL_PARAMS.softThreshold;
}

/** Labels of every chunk under one signal (length H = q.length − 1). */
export function signalLabels(
  signal: LabelSignal,
  q: readonly number[],
  params: Partial<SignalParams> = {},
): LabelValue[] {
  const p = { ...DEFAULT_SIGNAL_PARAMS, ...params };
  switch (signal) {
    case 'abs-q':
      return absQLabels(q);
    case 'rel-ratio':
      return relRatioLabels(q, p.gamma, p.zeroOverZero);
    case 'rel-effective':
      return relEffectiveLabels(q, p.alpha, p.bestOfN);
    case 'ms-hard':
      return msHardLabels(q);
    case 'ms-soft':
      return msSoftLabels(q);
    case 'sorm':
      return sormLabels(q);
  }
}

/** The first error under a signal: the first chunk whose label is negative, −1 when none. */
export function firstErrorOf(labels: readonly LabelValue[], softThreshold?: number): number {
  return firstNegative(labels.map((v) => isPositiveLabel(v, softThreshold)));
}

/** Every requested signal's labels and first error from one Q̂ vector. */
export interface SignalSet {
  /** `labels[signal][i]` is the label of chunk i (0-based). */
  labels: Partial<Record<LabelSignal, LabelValue[]>>;
  firstError: Partial<Record<LabelSignal, number>>;
}

/** Compute the requested signals from Q̂(0..H). */
export function computeSignals(
  q: readonly number[],
  signals: readonly LabelSignal[],
  params: Partial<SignalParams> = {},
): SignalSet {
  const p = { ...DEFAULT_SIGNAL_PARAMS, ...params };
  const out: SignalSet = { labels: {}, firstError: {} };
  for (const s of signals) {
    const labels = signalLabels(s, q, p);
    out.labels[s] = labels;
    out.firstError[s] = firstErrorOf(labels, p.softThreshold);
  }
  return out;
}

/** Parse a comma-separated signal list; throws a RangeError naming the unknown ones. */
export function parseSignals(list: string | readonly string[]): LabelSignal[] {
  const names = (typeof list === 'string' ? list.split(',') : list).map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((s) => !(LABEL_SIGNALS as readonly string[]).includes(s));
  if (bad.length > 0) {
    throw new RangeError(`unknown signal(s) ${bad.join(', ')}; known: ${LABEL_SIGNALS.join(', ')}`);
  }
  return [...new Set(names)] as LabelSignal[];
}
