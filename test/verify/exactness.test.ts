import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explainEquivalence, loadEquivalenceCases, scoreEquivalenceCases } from '../../src/verify/index.js';

// Held-out exactness suite (written for issue #27, not tuned on): big integers, factorials, powers,
// rationals, scientific notation and infinities, equal and unequal pairs.
const SUITE = fileURLToPath(new URL('../fixtures/verify/exactness.jsonl', import.meta.url));

describe('exact answer checking', () => {
  it('the held-out exactness suite has no false positive and no false negative', () => {
    const cases = loadEquivalenceCases(SUITE);
    expect(cases.length).toBeGreaterThanOrEqual(80);
    expect(cases.filter((c) => !c.equal).length).toBeGreaterThanOrEqual(40);
    const report = scoreEquivalenceCases(cases);
    const wrong = report.disagreements.map((d) => d.id);
    expect(report.falsePositives, JSON.stringify(wrong)).toBe(0);
    expect(report.agree, JSON.stringify(wrong)).toBe(cases.length);
  });

  it('every pair named in issue #27 is unequal, decided exactly', () => {
    const pairs: Array<[string, string]> = [
      ['5!', '5'],
      ['2^{1000}', '2^{1000}+1'],
      ['10^{20}+1', '10^{20}'],
      ['123456789012345678', '123456789012345679'],
      ['1e400', '2e400'],
      ['\\infty', '10^{309}'],
    ];
    for (const [a, b] of pairs) {
      expect(explainEquivalence(a, b).equal, `${a} vs ${b}`).toBe(false);
      expect(explainEquivalence(b, a).equal, `${b} vs ${a}`).toBe(false);
    }
    expect(explainEquivalence('5!', '120').equal).toBe(true);
    expect(explainEquivalence('2^{1000}', '4^{500}').equal).toBe(true);
  });

  it('tolerance is kept for decimals by nature only', () => {
    // A decimal is a rounded value: 16 digits of 1/12 equal it.
    expect(explainEquivalence('\\frac{1}{12}', '0.0833333333333333').equal).toBe(true);
    // Integers and rationals that differ in the 8th significant digit are different answers.
    expect(explainEquivalence('100000001', '100000000').equal).toBe(false);
    expect(explainEquivalence('\\frac{100000001}{3}', '\\frac{100000000}{3}').equal).toBe(false);
    // Scientific notation is exact, not a rounding.
    expect(explainEquivalence('1.5\\times10^{20}', '150000000000000000001').equal).toBe(false);
  });
});
