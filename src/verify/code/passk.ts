import { UsageError } from '../../core/errors.js';

/**
 * Unbiased pass@k estimator (Chen et al. 2021, HumanEval): with n samples of which c pass,
 * pass@k = 1 − C(n−c, k) / C(n, k), the chance that at least one of k samples drawn without
 * replacement passes. Computed as 1 − ∏_{i=n−c+1}^{n} (1 − k/i), which never forms the huge
 * binomials. Requires 0 ≤ c ≤ n and 1 ≤ k ≤ n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new UsageError(`pass@k needs integers (n=${n}, c=${c}, k=${k})`);
  if (n < 1 || c < 0 || c > n) throw new UsageError(`pass@k needs 0 ≤ c ≤ n and n ≥ 1 (n=${n}, c=${c})`);
  if (k < 1 || k > n) throw new UsageError(`pass@${k} needs at least k samples per problem (n=${n})`);
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** Mean pass@k over problems, each given as its sample count n and passing count c. */
export function meanPassAtK(problems: ReadonlyArray<{ n: number; c: number }>, k: number): number {
  if (problems.length === 0) return Number.NaN;
  let sum = 0;
  for (const p of problems) sum += passAtK(p.n, p.c, k);
  return sum / problems.length;
}
