/**
 * Seeded randomness. Every stochastic piece of stepwise takes an `Rng` (or a seed) explicitly,
 * so that runs reproduce exactly; nothing reads `Math.random`.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer uniform in [lo, hi] inclusive. */
  int(lo: number, hi: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** A uniformly chosen element. */
  pick<T>(items: readonly T[]): T;
  /** A new independent generator derived from this one and a label. */
  fork(label: string | number): Rng;
}

/** 32-bit FNV-1a hash of a string: to turn labels and request keys into seeds. */
export function hashString(s: string): number {
  return hashStringFrom(0x811c9dc5, s);
}

/**
 * FNV-1a continued from the hash `h` of a text over `s`: `hashStringFrom(hashString(a), b) ===
 * hashString(a + b)`. Lets a key that grows chunk by chunk be hashed in linear time.
 */
export function hashStringFrom(h: number, s: string): number {
  let x = h;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193);
  }
  return x >>> 0;
}

/** mulberry32: small, fast, good enough for simulation and shuffling. */
export function createRng(seed: number | string): Rng {
  let a = (typeof seed === 'string' ? hashString(seed) : seed >>> 0) || 0x9e3779b9;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
    fork: (label) => createRng(hashString(`${a}:${label}`)),
  };
  return rng;
}

/** Fisher–Yates shuffle into a new array. */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
