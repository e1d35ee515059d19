import { describe, expect, it } from 'vitest';
import { aggregateScores, argmaxBy, classifyStep } from '../../src/search/aggregate.js';
import { sampleEndsSolution, splitSolution } from '../../src/search/domain.js';
import { DEFAULT_SEARCH_CONFIG, resolveSearchConfig } from '../../src/search/registry.js';
import { tallyVotes, winningGroup } from '../../src/search/vote.js';

describe('aggregateScores', () => {
  const s = [0.9, 0.5, 0.8];
  it('computes last, min, product, mean by hand', () => {
    expect(aggregateScores(s, 'last')).toBe(0.8);
    expect(aggregateScores(s, 'min')).toBe(0.5);
    expect(aggregateScores(s, 'product')).toBeCloseTo(0.36, 12);
    expect(aggregateScores(s, 'mean')).toBeCloseTo(2.2 / 3, 12);
  });
  it('scores an empty solution 0', () => {
    for (const how of ['last', 'min', 'product', 'mean'] as const) expect(aggregateScores([], how)).toBe(0);
  });
});

describe('classifyStep', () => {
  it("keeps the judge's verdict without thresholds", () => {
    expect(classifyStep({ verdict: 'negative', score: 0.9 }, {})).toBe('negative');
    expect(classifyStep({ verdict: 'neutral', score: 0.1 }, {})).toBe('neutral');
  });
  it('maps scores with thresholds: ≥ positiveAt positive, < negativeBelow negative, else neutral', () => {
    const t = { positiveAt: 0.7, negativeBelow: 0.3 };
    expect(classifyStep({ verdict: 'negative', score: 0.7 }, t)).toBe('positive');
    expect(classifyStep({ verdict: 'positive', score: 0.29 }, t)).toBe('negative');
    expect(classifyStep({ verdict: 'positive', score: 0.3 }, t)).toBe('neutral');
  });
});

describe('argmaxBy', () => {
  it('breaks ties by the secondary key, then by order', () => {
    const items = [
      { a: 1, b: 0 },
      { a: 2, b: 0 },
      { a: 2, b: 5 },
      { a: 2, b: 5 },
    ];
    expect(argmaxBy(items, (x) => x.a)).toBe(1);
    expect(
      argmaxBy(
        items,
        (x) => x.a,
        (x) => x.b,
      ),
    ).toBe(2);
    expect(argmaxBy([], (x: number) => x)).toBe(-1);
  });
});

describe('tallyVotes', () => {
  const numeric = (a: string, b: string): boolean => Number(a) === Number(b);
  it('groups equivalent answers, ignores null answers, sums weights', () => {
    const groups = tallyVotes(['10', null, '10.0', '3', '3', '3'], [0.9, 1, 0.8, 0.2, 0.2, 0.2], numeric);
    expect(groups.map((g) => [g.answer, g.count, g.first])).toEqual([
      ['10', 2, 0],
      ['3', 3, 3],
    ]);
    expect(groups[0].weight).toBeCloseTo(1.7, 12);
    expect(winningGroup(groups)?.answer).toBe('10');
    expect(winningGroup(tallyVotes(['10', '10.0', '3', '3', '3'], [1, 1, 1, 1, 1], numeric))?.answer).toBe(
      '3',
    );
    expect(winningGroup([])).toBeUndefined();
  });
});

describe('resolveSearchConfig', () => {
  it('fills defaults (5 attempts per chunk, m = 4) and ignores undefined fields', () => {
    const c = resolveSearchConfig({ n: 16, beamWidth: undefined });
    expect(c.n).toBe(16);
    expect(c.beamWidth).toBe(DEFAULT_SEARCH_CONFIG.beamWidth);
    expect(c.maxAttempts).toBe(5);
    expect(c.fallback).toBe('best-scored');
  });
  it('rejects bad values with a message naming the field', () => {
    expect(() => resolveSearchConfig({ n: 0 })).toThrow(/n must be a positive integer/);
    expect(() => resolveSearchConfig({ aggregation: 'max' as never })).toThrow(/aggregation/);
    expect(() => resolveSearchConfig({ positiveAt: 0.5 })).toThrow(/both positiveAt and negativeBelow/);
    expect(() => resolveSearchConfig({ positiveAt: 0.2, negativeBelow: 0.5 })).toThrow(/must not exceed/);
  });
});

describe('step samples and splitting', () => {
  it('a step stopped on the separator goes on; end of text, length or a boxed answer end it', () => {
    const base = { completionTokens: 1 };
    expect(sampleEndsSolution({ ...base, text: 'a', finishReason: 'stop', stopReason: '\n\n' }, '\n\n')).toBe(
      false,
    );
    expect(sampleEndsSolution({ ...base, text: 'a', finishReason: 'stop', stopReason: null }, '\n\n')).toBe(
      true,
    );
    expect(sampleEndsSolution({ ...base, text: 'a', finishReason: 'length' }, '\n\n')).toBe(true);
    expect(sampleEndsSolution({ ...base, text: 'a', finishReason: 'stop' }, '\n\n')).toBe(false);
    expect(
      sampleEndsSolution(
        { ...base, text: 'so \\boxed{3}', finishReason: 'stop', stopReason: '\n\n' },
        '\n\n',
      ),
    ).toBe(true);
  });
  it('splits on blank lines or a custom separator', () => {
    expect(splitSolution('a\n\n b \n\n\nc', '\n\n')).toEqual(['a', 'b', 'c']);
    expect(splitSolution('a ## b ##', '##')).toEqual(['a', 'b']);
  });
});
