/**
 * pass@k with the unbiased estimator of Chen et al. (2021): from n samples of which c are
 * correct, pass@k = 1 − C(n−c, k) / C(n, k), computed as a running product for stability.
 * Requires k ≤ n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    n < 1 ||
    k < 1 ||
    k > n ||
    c < 0 ||
    c > n
  )
    throw new RangeError(`pass@k needs integers 1 ≤ k ≤ n and 0 ≤ c ≤ n (got n=${n}, c=${c}, k=${k})`);
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** Mean pass@k over problems, each given as (samples, correct). Problems with fewer than k samples are skipped. */
export function meanPassAtK(problems: ReadonlyArray<{ n: number; c: number }>, k: number): number {
  const usable = problems.filter((p) => p.n >= k);
  if (usable.length === 0) return Number.NaN;
  return usable.reduce((a, p) => a + passAtK(p.n, p.c, k), 0) / usable.length;
}

/** The k values to report for n samples per problem: 1, powers of two below n, and n. */
export function reportedKs(n: number): number[] {
  const ks = new Set<number>([1]);
  for (let k = 2; k < n; k *= 2) ks.add(k);
  ks.add(n);
  return [...ks].filter((k) => k >= 1 && k <= n).sort((a, b) => a - b);
}
