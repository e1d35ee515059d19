/** The k values to report for n samples per problem: 1, powers of two below n, and n. */
export function reportedKs(n: number): number[] {
  const ks = new Set<number>([1]);
  for (let k = 2; k < n; k *= 2) ks.add(k);
  ks.add(n);
  return [...ks].filter((k) => k >= 1 && k <= n).sort((a, b) => a - b);
}
