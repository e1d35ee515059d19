import { streamJsonl } from '../jobs/lines.js';

/**
 * A paired comparison of two strategies on the same problems: the mean of the per-problem
 * differences in correctness (other − baseline) with its 95% interval (Student t on the
 * per-problem differences). Pairing removes the spread of problem difficulty from the comparison;
 * when both strategies read the same pool of samples (src/search/pool.ts) it also removes most of
 * the sampling noise between them.
 */
export interface PairedDifference {
  /** What the difference is taken against (`sample`: plain sampling). */
  baseline: string;
  /** Problems checked in both runs (the pairs). */
  problems: number;
  /** Mean per-problem difference in accuracy, other − baseline, as a share (0.05 = 5 points). */
  difference: number;
  /** 95% interval of the mean difference (absent with fewer than 2 pairs). */
  low?: number;
  high?: number;
  /** Problems the other strategy solved and the baseline did not, and the reverse. */
  wins: number;
  losses: number;
}

/** Two-sided 95% quantile of Student's t with `df` degrees of freedom (Cornish–Fisher for df ≥ 3). */
export function tQuantile975(df: number): number {
  if (df <= 1) return 12.706;
  if (df === 2) return 4.303;
  const z = 1.959964;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3;
}

/** Paired difference of `other` against `baseline`, both by problem id (true = correct). */
export function pairedDifference(
  baseline: ReadonlyMap<string, boolean>,
  other: ReadonlyMap<string, boolean>,
  baselineName = 'sample',
): PairedDifference {
  const diffs: number[] = [];
  let wins = 0;
  let losses = 0;
  for (const [id, b] of baseline) {
    const o = other.get(id);
    if (o === undefined) continue;
    const d = Number(o) - Number(b);
    if (d > 0) wins++;
    if (d < 0) losses++;
    diffs.push(d);
  }
  const m = diffs.length;
  const mean = m === 0 ? 0 : diffs.reduce((a, b) => a + b, 0) / m;
  if (m < 2) return { baseline: baselineName, problems: m, difference: mean, wins, losses };
  const variance = diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (m - 1);
  const half = tQuantile975(m - 1) * Math.sqrt(variance / m);
  return {
    baseline: baselineName,
    problems: m,
    difference: mean,
    low: mean - half,
    high: mean + half,
    wins,
    losses,
  };
}

/**
 * Per-problem outcomes as a string in problem order: `1` correct, `0` wrong, `-` not checked (no
 * gold answer). Compact enough to keep on every bench point, so a resumed sweep can still pair.
 */
export function outcomeString(
  ids: readonly string[],
  correct: ReadonlyMap<string, boolean | undefined>,
): string {
  return ids.map((id) => (correct.get(id) === undefined ? '-' : correct.get(id) ? '1' : '0')).join('');
}

/** The outcomes of {@link outcomeString} back as a map by problem id (unchecked problems left out). */
export function outcomesOf(ids: readonly string[], outcomes: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  ids.forEach((id, i) => {
    const c = outcomes[i];
    if (c === '1' || c === '0') out.set(id, c === '1');
  });
  return out;
}

/** Checked outcomes of a search output file (`stepwise search --out`) by problem id. */
export function outcomesOfFile(file: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const { value } of streamJsonl(file, { skipInvalid: true })) {
    const r = value as { id?: unknown; correct?: unknown } | null;
    if (r && typeof r.id === 'string' && typeof r.correct === 'boolean') out.set(r.id, r.correct);
  }
  return out;
}

/** "+5.0 points [95% −1.2, +11.2], 60 pairs": a paired difference for people. */
export function formatPaired(p: PairedDifference): string {
  const pts = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}`;
  const interval = p.low !== undefined && p.high !== undefined ? ` [95% ${pts(p.low)}, ${pts(p.high)}]` : '';
  return `${pts(p.difference)} points vs ${p.baseline === 'sample' ? 'plain sampling' : p.baseline}${interval}, paired over ${p.problems} problems (${p.wins} won, ${p.losses} lost)`;
}
