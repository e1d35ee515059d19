import { describe, expect, it } from 'vitest';
import { reportedKs } from '../../src/sample/passk.js';
import { type SampleRecord, summarizeSamples } from '../../src/sample/sample.js';
import { meanPassAtK, passAtK } from '../../src/verify/code/passk.js';

describe('pass@k (unbiased estimator)', () => {
  it('matches hand-computed values', () => {
    // n=4, c=1, k=2: 1 − C(3,2)/C(4,2) = 1 − 3/6.
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 12);
    // n=5, c=2, k=2: 1 − C(3,2)/C(5,2) = 1 − 3/10.
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    // k=1 is the fraction correct.
    expect(passAtK(8, 3, 1)).toBeCloseTo(3 / 8, 12);
    expect(passAtK(4, 0, 4)).toBe(0);
    expect(passAtK(4, 1, 4)).toBe(1);
    expect(passAtK(10, 8, 3)).toBe(1);
    expect(() => passAtK(2, 1, 3)).toThrow(/at least k samples/);
  });

  it('averages over problems and picks k = 1, 2, 4, …, n', () => {
    expect(
      meanPassAtK(
        [
          { n: 4, c: 1 },
          { n: 4, c: 0 },
        ],
        2,
      ),
    ).toBeCloseTo(0.25, 12);
    expect(reportedKs(4)).toEqual([1, 2, 4]);
    expect(reportedKs(6)).toEqual([1, 2, 4, 6]);
    expect(reportedKs(1)).toEqual([1]);
  });

  it('summarises records: accuracy, pass@k, tokens', () => {
    const s = (correct: boolean, tokens: number) => ({
      text: '',
      chunks: [],
      answer: correct ? '1' : null,
      correct,
      tokens,
      finishReason: 'stop' as const,
    });
    const records: SampleRecord[] = [
      {
        id: 'a',
        question: 'Q',
        gold: '1',
        samples: [s(true, 10), s(false, 20)],
        promptTokens: 7,
        cached: false,
      },
      {
        id: 'b',
        question: 'Q',
        gold: '1',
        samples: [s(false, 30), s(false, 40)],
        promptTokens: 0,
        cached: true,
      },
    ];
    const sum = summarizeSamples(records);
    expect(sum.accuracy).toBe(0.25);
    expect(sum.passAtK).toEqual({ 'pass@1': 0.25, 'pass@2': 0.5 });
    expect(sum.tokens).toEqual({ completion: 100, prompt: 7, meanPerSample: 25 });
    expect(sum.noAnswer).toBe(3);
    expect(sum.cachedProblems).toBe(1);
  });
});
