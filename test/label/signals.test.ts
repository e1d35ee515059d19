import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/rng.js';
import { balanceByPrefixLength, prefixExamples } from '../../src/label/balance.js';
import {
  absQLabels,
  bestOfNValue,
  computeSignals,
  firstErrorOf,
  firstNegative,
  isPositiveLabel,
  msHardLabels,
  msSoftLabels,
  parseSignals,
  propagatePositivesBackward,
  relEffectiveLabels,
  relRatioLabels,
  sormLabels,
} from '../../src/label/signals.js';

// Q̂(0) = 0.5 (empty prefix), then chunks 1..5.
const Q = [0.5, 0.5, 0.25, 0, 0, 0.5];

describe('abs-q and Math-Shepherd', () => {
  it('abs-q is Q̂(i) > 0 for chunks 1..H, indexed from 0', () => {
    expect(absQLabels(Q)).toEqual([true, true, false, false, true]);
    expect(firstNegative(absQLabels(Q))).toBe(2);
  });
  it('ms-hard equals abs-q on the same rollouts; ms-soft is Q̂ itself', () => {
    expect(msHardLabels(Q)).toEqual(absQLabels(Q));
    expect(msSoftLabels(Q)).toEqual([0.5, 0.25, 0, 0, 0.5]);
    // Soft first error: first chunk with Q̂ < 0.5.
    expect(firstErrorOf(msSoftLabels(Q))).toBe(1);
    expect(firstErrorOf(msSoftLabels(Q), 0.25)).toBe(2);
    expect(isPositiveLabel(0.5)).toBe(true);
    expect(isPositiveLabel(0.49)).toBe(false);
  });
  it('no chunks: no labels, first error −1', () => {
    expect(absQLabels([0.3])).toEqual([]);
    expect(firstNegative([])).toBe(-1);
  });
  it('rejects values outside [0, 1] and an empty vector', () => {
    expect(() => absQLabels([])).toThrow(RangeError);
    expect(() => absQLabels([0.5, 1.5])).toThrow(/q\[1\]/);
    expect(() => absQLabels([0.5, Number.NaN])).toThrow(RangeError);
  });
});

describe('rel-ratio', () => {
  it('hand-computed case with γ = 0.8', () => {
    // 0.5/0.5 = 1 > .8; 0.25/0.5 = .5; 0/0.25 = 0; 0/0 negative; 0.5/0 = ∞.
    expect(relRatioLabels(Q, 0.8)).toEqual([true, false, false, false, true]);
  });
  it('a ratio equal to γ is negative, also with k/M fractions', () => {
    expect(relRatioLabels([0.5, 0.5], 1.0)).toEqual([false]);
    expect(relRatioLabels([5 / 8, 4 / 8], 0.8)).toEqual([false]);
    expect(relRatioLabels([0.5, 0.4], 0.8)).toEqual([false]);
    expect(relRatioLabels([0.5, 0.4375], 0.8)).toEqual([true]);
  });
  it('0/0: negative by default, ratio 1 with no-change', () => {
    expect(relRatioLabels([0, 0], 0.8)).toEqual([false]);
    expect(relRatioLabels([0, 0], 0.8, 'no-change')).toEqual([true]);
    expect(relRatioLabels([0, 0], 1.2, 'no-change')).toEqual([false]);
    expect(relRatioLabels([0, 0], 1.0, 'no-change')).toEqual([false]);
    expect(relRatioLabels(Q, 0.8, 'no-change')).toEqual([true, false, false, true, true]);
  });
  it('chunk 1 compares with the empty prefix Q̂(0)', () => {
    expect(relRatioLabels([0, 0.25], 0.8)).toEqual([true]);
    expect(relRatioLabels([1, 0.75], 0.8)).toEqual([false]);
    expect(relRatioLabels([1, 0.875], 0.8)).toEqual([true]);
  });
});

describe('rel-effective', () => {
  it('best-of-n value', () => {
    expect(bestOfNValue(0.5, 4)).toBeCloseTo(0.9375, 12);
    expect(bestOfNValue(0.25, 4)).toBeCloseTo(0.68359375, 12);
    expect(bestOfNValue(0, 4)).toBe(0);
    expect(bestOfNValue(1, 4)).toBe(1);
  });
  it('hand-computed case α = 0.4, n = 4', () => {
    // c2: 0.25 + 0.4·(0.68359375 − 0.9375) = 0.1484375 > 0; c3: 0 + 0.4·(0 − 0.68359375) < 0.
    expect(relEffectiveLabels(Q, 0.4, 4)).toEqual([true, true, false, false, true]);
  });
  it('a big drop in best-of-n value turns a solvable chunk negative for large α', () => {
    // Q_μ(1) = 1, Q_μ(0.125) = 0.413818359375; 0.125 + α·(−0.586181640625).
    expect(relEffectiveLabels([1, 0.125], 0.8, 4)).toEqual([false]);
    expect(relEffectiveLabels([1, 0.125], 0.2, 4)).toEqual([true]);
  });
});

describe('sorm', () => {
  it('backward propagation of positives', () => {
    expect(propagatePositivesBackward([true, false, true, false, false])).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(propagatePositivesBackward([false, false])).toEqual([false, false]);
    expect(sormLabels(Q)).toEqual([true, true, true, true, true]);
    expect(sormLabels([0.3, 0.2, 0, 0.1, 0, 0])).toEqual([true, true, true, false, false]);
  });
});

describe('computeSignals', () => {
  it('labels and first errors for every requested signal', () => {
    const s = computeSignals(Q, ['abs-q', 'rel-ratio', 'rel-effective', 'ms-hard', 'ms-soft', 'sorm']);
    expect(s.firstError).toEqual({
      'abs-q': 2,
      'rel-ratio': 1,
      'rel-effective': 2,
      'ms-hard': 2,
      'ms-soft': 1,
      sorm: -1,
    });
    expect(s.labels['ms-soft']).toEqual([0.5, 0.25, 0, 0, 0.5]);
    const g = computeSignals(Q, ['rel-ratio'], { gamma: 1.0 });
    expect(g.firstError['rel-ratio']).toBe(0);
  });
  it('parses signal lists and names unknown ones', () => {
    expect(parseSignals('abs-q, sorm,abs-q')).toEqual(['abs-q', 'sorm']);
    expect(() => parseSignals('abs-q,foo')).toThrow(/foo/);
  });
});

describe('balanceByPrefixLength', () => {
  const solutions = [
    { id: 'a', labels: [true, true, true] },
    { id: 'b', labels: [true, false, true] },
    { id: 'c', labels: [true, true, true] },
    { id: 'd', labels: [false, false, true] },
  ];
  const examples = prefixExamples(solutions);
  it('keeps min(pos, neg) of each class per prefix length; one-class lengths keep nothing', () => {
    const kept = balanceByPrefixLength(examples, (e) => e, createRng(1));
    const byLen = (n: number) => kept.filter((e) => e.prefixLength === n);
    // length 1: 3 pos, 1 neg → 1 + 1; length 2: 2 pos, 2 neg → all; length 3: only pos → none.
    expect(byLen(1).filter((e) => e.positive)).toHaveLength(1);
    expect(byLen(1).filter((e) => !e.positive)).toEqual([
      { solutionId: 'd', prefixLength: 1, positive: false },
    ]);
    expect(byLen(2)).toHaveLength(4);
    expect(byLen(3)).toHaveLength(0);
  });
  it('is seeded and keeps input order', () => {
    const a = balanceByPrefixLength(examples, (e) => e, createRng(7));
    const b = balanceByPrefixLength(examples, (e) => e, createRng(7));
    expect(a).toEqual(b);
    const order = a.map((e) => examples.indexOf(e));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    const picks = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const k = balanceByPrefixLength(examples, (e) => e, createRng(seed));
      picks.add(k.find((e) => e.prefixLength === 1 && e.positive)!.solutionId);
    }
    expect(picks.size).toBeGreaterThan(1);
  });
});
