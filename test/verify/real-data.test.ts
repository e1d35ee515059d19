import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  extractAnswer,
  isEquivalent,
  loadEquivalenceCases,
  scoreEquivalenceCases,
} from '../../src/verify/index.js';
import { sharedData, sharedEval } from '../support/shared-data.js';

describe('peer answer-equivalence suite (../shared/eval/answer-equiv)', () => {
  it("agrees with all 453 main cases (today's figure: a regression fails), no false positive", () => {
    const cases = loadEquivalenceCases(sharedEval('answer-equiv/answer_equiv_cases.jsonl'));
    expect(cases).toHaveLength(453);
    const report = scoreEquivalenceCases(cases);
    const unequal = cases.filter((c) => !c.equal).length;
    expect(unequal).toBe(108);
    expect(report.agree, JSON.stringify(report.disagreements.map((d) => d.id))).toBe(453);
    expect(report.falsePositives).toBe(0);
  });
});

describe('MATH-500 answers (../shared/data/math500/test.jsonl)', () => {
  const records = readFileSync(sharedData('math500/test.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { answer: string; solution: string });

  it('the boxed answer of each reference solution equals the gold answer (>= 495 of 500)', () => {
    expect(records).toHaveLength(500);
    const misses = records.filter((r) => !isEquivalent(r.answer, extractAnswer(r.solution)));
    expect(500 - misses.length, JSON.stringify(misses.map((m) => m.answer))).toBeGreaterThanOrEqual(495);
  });

  it('different answers of consecutive records are not equivalent (>= 98% of pairs)', () => {
    let pairs = 0;
    let distinct = 0;
    for (let i = 0; i + 1 < records.length; i++) {
      if (records[i].answer === records[i + 1].answer) continue;
      pairs++;
      if (!isEquivalent(records[i].answer, records[i + 1].answer)) distinct++;
    }
    expect(pairs).toBeGreaterThan(400);
    expect(distinct / pairs).toBeGreaterThanOrEqual(0.98);
  });
});
