import type { Verdict } from '../core/types.js';
import type { Aggregation } from './types.js';

/**
 * One solution score from its step scores (METHODS §5): `last` (the final step's score, the
 * PRM-as-ORM reading), `min` (the weakest step), `product` (probability that every step is good),
 * `mean`. An empty list scores 0: a solution with no steps has nothing to recommend it.
 */
export function aggregateScores(scores: readonly number[], how: Aggregation): number {
  if (scores.length === 0) return 0;
  switch (how) {
    case 'last':
      return scores[scores.length - 1];
    case 'min':
      return Math.min(...scores);
    case 'product':
      return scores.reduce((p, s) => p * s, 1);
    case 'mean':
      return scores.reduce((p, s) => p + s, 0) / scores.length;
  }
}

/**
 * Three-way step class used by greedy search and chunk-reset. Without thresholds the judge's own
 * verdict stands (generative judges say Positive / Negative; scalar PRMs apply their threshold).
 * With thresholds: score ≥ positiveAt → positive, score < negativeBelow → negative, else neutral.
 */
export function classifyStep(
  judgment: { verdict: Verdict; score: number },
  thresholds: { positiveAt?: number; negativeBelow?: number },
): Verdict {
  const { positiveAt, negativeBelow } = thresholds;
  if (positiveAt === undefined || negativeBelow === undefined) return judgment.verdict;
  if (judgment.score >= positiveAt) return 'positive';
  if (judgment.score < negativeBelow) return 'negative';
  return 'neutral';
}

/** Index of the best item: highest `primary`, then highest `secondary`, then earliest. −1 for an empty list. */
export function argmaxBy<T>(
  items: readonly T[],
  primary: (t: T) => number,
  secondary?: (t: T) => number,
): number {
  let best = -1;
  for (let i = 0; i < items.length; i++) {
    if (best < 0) {
      best = i;
      continue;
    }
    const a = primary(items[i]);
    const b = primary(items[best]);
    if (a > b || (a === b && secondary !== undefined && secondary(items[i]) > secondary(items[best])))
      best = i;
  }
  return best;
}

/**
 * The attempts a fallback may choose from: the judged ones when there are any (an abstention never
 * outranks a judged attempt, docs/search.md "Abstentions"), else all of them.
 */
export function judgedFirst<T extends { abstained?: true }>(attempts: readonly T[]): T[] {
  const judged = attempts.filter((a) => !a.abstained);
  return judged.length > 0 ? judged : [...attempts];
}
