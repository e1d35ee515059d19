import type { Rng } from '../core/rng.js';
import { shuffled } from '../core/rng.js';

/** One labeled prefix: the solution it comes from, its length in chunks, and its label. */
export interface PrefixExample {
  solutionId: string;
  /** Number of chunks in the prefix (chunk index + 1). */
  prefixLength: number;
  positive: boolean;
}

/** Every chunk of every solution as a prefix example under one boolean label sequence. */
export function prefixExamples(
  solutions: ReadonlyArray<{ id: string; labels: readonly boolean[] }>,
): PrefixExample[] {
  const out: PrefixExample[] = [];
  for (const s of solutions) {
    s.labels.forEach((positive, i) => {
      out.push({ solutionId: s.id, prefixLength: i + 1, positive });
    });
  }
  return out;
}

/**
 * SORM data balancing (GLoRe): for each prefix length, keep as many positives as negatives by
 * down-sampling the larger class uniformly at random (seeded). A prefix length with only one
 * class keeps nothing — balance is exact per length, as the method states. The survivors keep
 * their input order, so the result depends only on the input and the seed.
 */
export function balanceByPrefixLength<T>(
  items: readonly T[],
  describe: (item: T) => { prefixLength: number; positive: boolean },
  rng: Rng,
): T[] {
  const groups = new Map<number, { pos: number[]; neg: number[] }>();
  items.forEach((item, i) => {
    const { prefixLength, positive } = describe(item);
    let g = groups.get(prefixLength);
    if (!g) {
      g = { pos: [], neg: [] };
      groups.set(prefixLength, g);
    }
    (positive ? g.pos : g.neg).push(i);
  });
  const keep = new Set<number>();
  // Iterate lengths in ascending order so the rng stream does not depend on Map insertion order.
  for (const length of [...groups.keys()].sort((a, b) => a - b)) {
    const g = groups.get(length)!;
    const n = Math.min(g.pos.length, g.neg.length);
    const r = rng.fork(length);
    for (const i of shuffled(g.pos, r).slice(0, n)) keep.add(i);
    for (const i of shuffled(g.neg, r).slice(0, n)) keep.add(i);
  }
  return items.filter((_, i) => keep.has(i));
}
