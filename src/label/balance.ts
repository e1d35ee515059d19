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

/** Per prefix length, the positions of its positive and of its negative prefixes. */
export type PrefixLengthGroups = Map<number, { pos: number[]; neg: number[] }>;

/** Add the prefix at `position` to its length's group. */
export function addToPrefixLengthGroups(
  groups: PrefixLengthGroups,
  position: number,
  prefixLength: number,
  positive: boolean,
): void {
  let g = groups.get(prefixLength);
  if (!g) {
    g = { pos: [], neg: [] };
    groups.set(prefixLength, g);
  }
  (positive ? g.pos : g.neg).push(position);
}

/**
 * SORM data balancing (GLoRe): for each prefix length, keep as many positives as negatives by
 * down-sampling the larger class uniformly at random (seeded). A prefix length with only one
 * class keeps nothing — balance is exact per length, as the method states. Calls `keep` with the
 * position of every survivor. Only positions are involved, so a streaming export can balance a
 * file from a few bytes per prefix and find the survivors on a second read.
 */
export function markBalancedByPrefixLength(
  groups: PrefixLengthGroups,
  rng: Rng,
  keep: (position: number) => void,
): void {
  // Iterate lengths in ascending order so the rng stream does not depend on Map insertion order.
  for (const length of [...groups.keys()].sort((a, b) => a - b)) {
    const g = groups.get(length)!;
    const n = Math.min(g.pos.length, g.neg.length);
    const r = rng.fork(length);
    for (const i of shuffled(g.pos, r).slice(0, n)) keep(i);
    for (const i of shuffled(g.neg, r).slice(0, n)) keep(i);
  }
}

/**
 * {@link markBalancedByPrefixLength} over a list: the survivors keep their input order, so the
 * result depends only on the input and the seed.
 */
export function balanceByPrefixLength<T>(
  items: readonly T[],
  describe: (item: T) => { prefixLength: number; positive: boolean },
  rng: Rng,
): T[] {
  const groups: PrefixLengthGroups = new Map();
  items.forEach((item, i) => {
    const { prefixLength, positive } = describe(item);
    addToPrefixLengthGroups(groups, i, prefixLength, positive);
  });
  const keep = new Set<number>();
  markBalancedByPrefixLength(groups, rng, (i) => keep.add(i));
  return items.filter((_, i) => keep.has(i));
}
