import { hashString } from '../core/rng.js';

/**
 * The seed for the block of samples that starts at `index` within a logical request with
 * `seed`. Index 0 keeps the caller's seed (so a plain request behaves exactly as the server
 * would with that seed); later blocks — n-fallback requests, or the missing tail of a
 * partly cached request — get a distinct seed derived from (seed, index), so they neither
 * repeat the first samples nor change from run to run. Values stay in the positive int32
 * range every server accepts.
 */
export function deriveSeed(seed: number | undefined, index: number): number | undefined {
  if (seed === undefined) return undefined;
  if (index === 0) return seed;
  return hashString(`${seed}:${index}`) & 0x7fffffff;
}

/** A per-item seed (e.g. per problem id) from a run seed: reproducible and distinct per item. */
export function itemSeed(seed: number | undefined, item: string): number | undefined {
  if (seed === undefined) return undefined;
  return hashString(`${seed}/${item}`) & 0x7fffffff;
}
