import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chunkAgreement,
  expectedStepJudgeMetrics,
  firstBelow,
  harmonicF1,
  processBenchScore,
  selectThreshold,
  subsetMetrics,
} from '../../src/evaluate/metrics.js';

describe('subsetMetrics', () => {
  it('hand-computed case', () => {
    // 3 erroneous samples (2 hit), 2 correct samples (1 hit).
    const m = subsetMetrics([
      { label: 2, prediction: 2 },
      { label: 0, prediction: 0 },
      { label: 4, prediction: 3 },
      { label: -1, prediction: -1 },
      { label: -1, prediction: 1 },
    ]);
    expect(m.n).toBe(5);
    expect(m.error_acc).toBeCloseTo(66.6666667, 6);
    expect(m.correct_acc).toBe(50);
    // 2·66.67·50/(116.67) = 57.142857…
    expect(m.f1).toBeCloseTo(57.1428571, 6);
  });

  it('null prediction never matches, and 0/0 F1 is 0', () => {
    const m = subsetMetrics([
      { label: -1, prediction: null },
      { label: 3, prediction: null },
    ]);
    expect(m).toEqual({ error_acc: 0, correct_acc: 0, f1: 0, n: 2 });
  });

  it('an empty class gives null accuracy and null F1', () => {
    const m = subsetMetrics([{ label: 1, prediction: 1 }]);
    expect(m).toEqual({ error_acc: 100, correct_acc: null, f1: null, n: 1 });
  });
});

describe('processBenchScore', () => {
  it('groups by subset in the published order and averages F1', () => {
    const s = processBenchScore([
      { subset: 'math', label: 1, prediction: 1 },
      { subset: 'math', label: -1, prediction: 0 },
      { subset: 'gsm8k', label: 1, prediction: 1 },
      { subset: 'gsm8k', label: -1, prediction: -1 },
    ]);
    expect(Object.keys(s.subsets)).toEqual(['gsm8k', 'math']);
    expect(s.subsets.gsm8k.f1).toBe(100);
    expect(s.subsets.math.f1).toBe(0);
    expect(s.average_f1).toBe(50);
  });
});

/** The official formula written out the plain way (numpy-style means), independent of subsetMetrics. */
function officialSubset(rows: Array<{ label: number; prediction: number }>) {
  const data1 = rows.filter((e) => e.label !== -1);
  const data2 = rows.filter((e) => e.label === -1);
  const mean = (xs: boolean[]) => xs.reduce((a, b) => a + (b ? 1 : 0), 0) / xs.length;
  const acc1 = mean(data1.map((e) => e.prediction === e.label)) * 100;
  const acc2 = mean(data2.map((e) => e.prediction === e.label)) * 100;
  return { acc1, acc2, f1: (2 * acc1 * acc2) / (acc1 + acc2) };
}

describe('official formula (property)', () => {
  it('every number equals the straightforward implementation to 1e-6', () => {
    const row = fc.record({
      label: fc.integer({ min: -1, max: 6 }),
      prediction: fc.integer({ min: -1, max: 6 }),
    });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 60 }), (rows) => {
        const ours = subsetMetrics(rows);
        const ref = officialSubset(rows);
        const hasErr = rows.some((r) => r.label !== -1);
        const hasCor = rows.some((r) => r.label === -1);
        if (hasErr) expect(Math.abs(ours.error_acc! - ref.acc1)).toBeLessThan(1e-6);
        else expect(ours.error_acc).toBeNull();
        if (hasCor) expect(Math.abs(ours.correct_acc! - ref.acc2)).toBeLessThan(1e-6);
        else expect(ours.correct_acc).toBeNull();
        if (hasErr && hasCor) {
          if (Number.isNaN(ref.f1)) expect(ours.f1).toBe(0);
          else expect(Math.abs(ours.f1! - ref.f1)).toBeLessThan(1e-6);
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('threshold selection', () => {
  it('firstBelow returns the first chunk under the threshold or -1', () => {
    expect(firstBelow([0.9, 0.4, 0.1], 0.5)).toBe(1);
    expect(firstBelow([0.9, 0.6], 0.5)).toBe(-1);
    expect(firstBelow([], 0.5)).toBe(-1);
  });

  it('picks a threshold that separates the cases perfectly when one exists', () => {
    const samples = [
      { label: 1, scores: [0.9, 0.3, 0.2] },
      { label: 0, scores: [0.2, 0.8] },
      { label: -1, scores: [0.7, 0.8, 0.9] },
      { label: -1, scores: [0.6] },
    ];
    const c = selectThreshold(samples);
    expect(c.f1).toBe(100);
    expect(c.threshold).toBeGreaterThan(0.3);
    expect(c.threshold).toBeLessThanOrEqual(0.6);
    // Any threshold between 0.3 and 0.6 works; the midpoint rule puts it at (0.3 + 0.6) / 2.
    expect(c.threshold).toBeCloseTo(0.45, 9);
  });

  it('matches brute force over a fine grid', () => {
    const sample = fc.record({
      label: fc.integer({ min: -1, max: 3 }),
      scores: fc.array(
        fc.integer({ min: 0, max: 20 }).map((x) => x / 20),
        { minLength: 4, maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(fc.array(sample, { minLength: 2, maxLength: 25 }), (samples) => {
        const c = selectThreshold(samples);
        let best = 0;
        for (let t = -0.01; t <= 1.06; t += 0.005) {
          const m = subsetMetrics(
            samples.map((s) => ({ label: s.label, prediction: firstBelow(s.scores, t) })),
          );
          best = Math.max(best, m.f1 ?? 0);
        }
        expect(c.f1).toBeGreaterThanOrEqual(best - 1e-9);
      }),
      { numRuns: 100, seed: 3 },
    );
  });
});

describe('expected sim judge metrics', () => {
  it('follows spec^k·sens and spec^H', () => {
    const e = expectedStepJudgeMetrics(
      [
        { label: 0, steps: 3 },
        { label: 2, steps: 4 },
        { label: -1, steps: 2 },
      ],
      { sensitivity: 0.8, specificity: 0.9 },
    );
    expect(e.error_acc).toBeCloseTo((100 * (0.8 + 0.81 * 0.8)) / 2, 9);
    expect(e.correct_acc).toBeCloseTo(81, 9);
    expect(e.f1).toBeCloseTo(harmonicF1(e.error_acc, e.correct_acc), 9);
  });
});

describe('chunkAgreement', () => {
  it('accuracy, balanced accuracy and per-class recall', () => {
    const a = chunkAgreement([
      { label: true, predicted: true },
      { label: true, predicted: true },
      { label: true, predicted: false },
      { label: false, predicted: false },
      { label: false, predicted: null },
    ]);
    expect(a.n).toBe(4);
    expect(a.abstained).toBe(1);
    expect(a.accuracy).toBe(0.75);
    expect(a.recall_positive).toBeCloseTo(2 / 3, 12);
    expect(a.recall_negative).toBe(1);
    expect(a.balanced_accuracy).toBeCloseTo((2 / 3 + 1) / 2, 12);
  });
});
