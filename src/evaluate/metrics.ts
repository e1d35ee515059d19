import { PROCESSBENCH_SUBSETS } from '../data/processbench.js';

/**
 * ProcessBench metrics (METHODS §4) as pure functions over plain records.
 *
 * The official evaluation (QwenLM/ProcessBench) computes, per subset:
 *   error_acc   = 100 · mean(prediction == label) over samples with label ≠ −1
 *   correct_acc = 100 · mean(prediction == label) over samples with label = −1
 *   f1          = 2 · error_acc · correct_acc / (error_acc + correct_acc)
 * and the headline number is the unweighted mean of the subsets' F1.
 *
 * Where the official script produces NaN we define the value instead:
 * - F1 is 0 when error_acc + correct_acc = 0 (the official script divides 0 by 0);
 * - an accuracy over an empty class (a subset, e.g. cut by `--limit`, that has no erroneous or
 *   no all-correct sample) is `null`, and so is that subset's F1; `average_f1` is then `null` too,
 *   because the mean of the four subsets is not defined without all of them.
 */

/** One scored sample: the true first-error label and the predicted one (−1 = no error). */
export interface FirstErrorRecord {
  label: number;
  /** Predicted first error; `null` when the judge gave no usable answer (never matches a label). */
  prediction: number | null;
}

/** Per-subset numbers, in percent, as in the official report. */
export interface SubsetMetrics {
  error_acc: number | null;
  correct_acc: number | null;
  f1: number | null;
  n: number;
}

/** The JSON shape of a ProcessBench score: `{subsets: {name: SubsetMetrics}, average_f1}`. */
export interface ProcessBenchScore {
  subsets: Record<string, SubsetMetrics>;
  average_f1: number | null;
}

/** Harmonic-mean F1 of two percentages; 0 when both are 0. */
export function harmonicF1(errorAcc: number, correctAcc: number): number {
  const sum = errorAcc + correctAcc;
  return sum === 0 ? 0 : (2 * errorAcc * correctAcc) / sum;
}

/** error_acc, correct_acc and F1 (percent) of one subset's records. */
export function subsetMetrics(records: readonly FirstErrorRecord[]): SubsetMetrics {
  const counts: HitCounts = { errN: 0, errHit: 0, corN: 0, corHit: 0 };
  for (const r of records) countHit(counts, r);
  return metricsOf(counts);
}

/** Erroneous and all-correct samples of a subset, and how many of each were predicted right. */
interface HitCounts {
  errN: number;
  errHit: number;
  corN: number;
  corHit: number;
}

function countHit(c: HitCounts, r: FirstErrorRecord): void {
  const hit = r.prediction !== null && r.prediction === r.label;
  if (r.label === -1) {
    c.corN++;
    if (hit) c.corHit++;
  } else {
    c.errN++;
    if (hit) c.errHit++;
  }
}

function metricsOf({ errN, errHit, corN, corHit }: HitCounts): SubsetMetrics {
  const error_acc = errN === 0 ? null : (100 * errHit) / errN;
  const correct_acc = corN === 0 ? null : (100 * corHit) / corN;
  const f1 = error_acc === null || correct_acc === null ? null : harmonicF1(error_acc, correct_acc);
  return { error_acc, correct_acc, f1, n: errN + corN };
}

/**
 * Score records grouped by subset. Subsets appear in the published order first, then any other
 * names in order of first appearance. `average_f1` is the mean of the subsets' F1 (null if any is null
 * or there are no subsets).
 */
export function processBenchScore(
  records: ReadonlyArray<FirstErrorRecord & { subset: string }>,
): ProcessBenchScore {
  const acc = processBenchScoreAccumulator();
  for (const r of records) acc.add(r);
  return acc.result();
}

/** {@link processBenchScore} one record at a time: keeps four counts a subset, not the records. */
export function processBenchScoreAccumulator(): {
  add(r: FirstErrorRecord & { subset: string }): void;
  result(): ProcessBenchScore;
} {
  const groups = new Map<string, HitCounts>();
  for (const name of PROCESSBENCH_SUBSETS) groups.set(name, { errN: 0, errHit: 0, corN: 0, corHit: 0 });
  return {
    add(r) {
      let g = groups.get(r.subset);
      if (!g) {
        g = { errN: 0, errHit: 0, corN: 0, corHit: 0 };
        groups.set(r.subset, g);
      }
      countHit(g, r);
    },
    result() {
      const subsets: Record<string, SubsetMetrics> = {};
      for (const [name, g] of groups) if (g.errN + g.corN > 0) subsets[name] = metricsOf(g);
      return { subsets, average_f1: averageF1(subsets) };
    },
  };
}

/** Mean of the subsets' F1; null when empty or when any subset's F1 is undefined. */
export function averageF1(subsets: Record<string, SubsetMetrics>): number | null {
  const f1s = Object.values(subsets).map((s) => s.f1);
  if (f1s.length === 0 || f1s.some((f) => f === null)) return null;
  return (f1s as number[]).reduce((a, b) => a + b, 0) / f1s.length;
}

/**
 * Scores → first-error prediction (METHODS §3): the first chunk whose score is below the
 * threshold, −1 when none is.
 */
export function firstBelow(scores: readonly number[], threshold: number): number {
  for (let i = 0; i < scores.length; i++) if (scores[i] < threshold) return i;
  return -1;
}

/** A scored sample for threshold selection: per-chunk scores and the true label. */
export interface ScoredSample {
  label: number;
  scores: readonly number[];
}

/** The chosen threshold and the F1 it reaches on the samples it was chosen on. */
export interface ThresholdChoice {
  threshold: number;
  f1: number;
  error_acc: number;
  correct_acc: number;
}

/**
 * The threshold that maximises F1 on `samples` (ProcessBench picks it on GSM8K for scalar PRMs).
 *
 * Predictions only change when the threshold crosses a score, so the candidates are: one value at
 * or below every score (predict −1 everywhere), the midpoints between consecutive distinct scores,
 * and one value above every score (predict chunk 0 everywhere). Ties go to the candidate closest to
 * 0.5, then to the smaller one, so the choice is deterministic.
 */
export function selectThreshold(samples: readonly ScoredSample[]): ThresholdChoice {
  const distinct = [...new Set(samples.flatMap((s) => s.scores))].sort((a, b) => a - b);
  const candidates: number[] = [];
  if (distinct.length === 0) candidates.push(0.5);
  else {
    candidates.push(distinct[0]);
    for (let i = 1; i < distinct.length; i++) candidates.push((distinct[i - 1] + distinct[i]) / 2);
    const top = distinct[distinct.length - 1];
    candidates.push(top < 1 ? (top + 1) / 2 : top + 1e-6);
  }
  let best: ThresholdChoice | null = null;
  for (const t of candidates) {
    const m = subsetMetrics(samples.map((s) => ({ label: s.label, prediction: firstBelow(s.scores, t) })));
    const choice: ThresholdChoice = {
      threshold: t,
      f1: m.f1 ?? 0,
      error_acc: m.error_acc ?? 0,
      correct_acc: m.correct_acc ?? 0,
    };
    if (
      best === null ||
      choice.f1 > best.f1 ||
      (choice.f1 === best.f1 && Math.abs(t - 0.5) < Math.abs(best.threshold - 0.5))
    ) {
      best = choice;
    }
  }
  return best!;
}

/**
 * Expected ProcessBench numbers of a simulated stepwise judge whose errors are independent per
 * chunk, run with first-error-only early exit and one vote:
 *   specificity = P(judge says Positive | chunk good), sensitivity = P(judge says Negative | chunk bad).
 * For a sample whose first error is at k, chunks 0..k−1 are good and chunk k is bad, so
 *   P(prediction = k | label = k) = spec^k · sens;
 * for an all-correct sample with H chunks, P(prediction = −1 | label = −1) = spec^H.
 * error_acc and correct_acc are these probabilities averaged over the set's actual labels and
 * lengths (percent); the F1 is computed from the two expected accuracies.
 */
export function expectedStepJudgeMetrics(
  samples: ReadonlyArray<{ label: number; steps: number }>,
  rates: { sensitivity: number; specificity: number },
): { error_acc: number; correct_acc: number; f1: number } {
  const { sensitivity: sens, specificity: spec } = rates;
  let errSum = 0;
  let errN = 0;
  let corSum = 0;
  let corN = 0;
  for (const s of samples) {
    if (s.label === -1) {
      corSum += spec ** s.steps;
      corN++;
    } else {
      errSum += spec ** s.label * sens;
      errN++;
    }
  }
  const error_acc = errN === 0 ? 0 : (100 * errSum) / errN;
  const correct_acc = corN === 0 ? 0 : (100 * corSum) / corN;
  return { error_acc, correct_acc, f1: harmonicF1(error_acc, correct_acc) };
}

/** Per-chunk agreement of a judge with reference labels (positive = good chunk). */
export interface ChunkAgreement {
  /** Chunks compared (judged positive or negative and labelled). */
  n: number;
  /** Judged chunks the judge abstained on (neutral verdict), not counted in `n`. */
  abstained: number;
  accuracy: number;
  /** Mean of the two per-class recalls (each class weighted equally, whatever its share). */
  balanced_accuracy: number;
  /** Share of positive-labelled chunks judged positive; null when there are none. */
  recall_positive: number | null;
  /** Share of negative-labelled chunks judged negative; null when there are none. */
  recall_negative: number | null;
  positives: number;
  negatives: number;
}

/**
 * Accuracy, balanced accuracy and per-class recall of predicted chunk verdicts against labels.
 * `predicted` null = abstained. Balanced accuracy averages the recalls of the classes present.
 */
export function chunkAgreement(
  pairs: ReadonlyArray<{ label: boolean; predicted: boolean | null }>,
): ChunkAgreement {
  let tp = 0;
  let tn = 0;
  let pos = 0;
  let neg = 0;
  let abstained = 0;
  for (const p of pairs) {
    if (p.predicted === null) {
      abstained++;
      continue;
    }
    if (p.label) {
      pos++;
      if (p.predicted) tp++;
    } else {
      neg++;
      if (!p.predicted) tn++;
    }
  }
  const n = pos + neg;
  const recall_positive = pos === 0 ? null : tp / pos;
  const recall_negative = neg === 0 ? null : tn / neg;
  const recalls = [recall_positive, recall_negative].filter((r): r is number => r !== null);
  return {
    n,
    abstained,
    accuracy: n === 0 ? 0 : (tp + tn) / n,
    balanced_accuracy: recalls.length === 0 ? 0 : recalls.reduce((a, b) => a + b, 0) / recalls.length,
    recall_positive,
    recall_negative,
    positives: pos,
    negatives: neg,
  };
}
