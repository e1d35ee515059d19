import { describe, expect, it } from 'vitest';
import { meanPassAtK, passAtK } from '../../src/verify/code/passk.js';

describe('pass@k (unbiased estimator)', () => {
  it('matches hand-computed values', () => {
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12); // c/n
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12); // 1 − C(3,2)/C(5,2) = 1 − 3/10
    expect(passAtK(4, 1, 3)).toBeCloseTo(0.75, 12); // 1 − C(3,3)/C(4,3) = 1 − 1/4
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12); // C(7,5) = 21, C(10,5) = 252
    expect(passAtK(10, 0, 5)).toBe(0);
    expect(passAtK(3, 2, 2)).toBe(1); // n − c < k: every draw of 2 contains a pass
    expect(passAtK(200, 200, 100)).toBe(1);
  });

  it('averages over problems', () => {
    expect(
      meanPassAtK(
        [
          { n: 5, c: 2 },
          { n: 5, c: 0 },
        ],
        1,
      ),
    ).toBeCloseTo(0.2, 12);
    expect(meanPassAtK([], 1)).toBeNaN();
  });

  it('rejects impossible inputs', () => {
    expect(() => passAtK(5, 6, 1)).toThrow(/c ≤ n/);
    expect(() => passAtK(5, 2, 6)).toThrow(/at least k samples/);
    expect(() => passAtK(5, 2, 0)).toThrow();
    expect(() => passAtK(5.5, 2, 1)).toThrow(/integers/);
  });
});
