import { describe, expect, it } from 'vitest';
import { splitParagraphs } from '../../src/core/segment.js';
import {
  lastBoxed,
  loadGsm8k,
  loadHumanEval,
  loadMath,
  loadMath500,
  loadMbpp,
  loadPrm800k,
  loadProblems,
  loadProcessBench,
} from '../../src/data/index.js';
import { sharedData } from '../support/shared-data.js';

// Real data from ../shared/data; sharedData() fails loudly when it is absent.
describe('loaders over the real data sets', () => {
  it('GSM8K: 1,319 test and 7,473 train problems, every answer a plain number', async () => {
    const test = await loadGsm8k({ path: sharedData('gsm8k/test.jsonl') });
    const train = await loadGsm8k({ path: sharedData('gsm8k/train.jsonl') });
    expect([test.records.length, train.records.length, test.skipped]).toEqual([1319, 7473, 0]);
    for (const p of [...test.records, ...train.records]) expect(p.answer).toMatch(/^-?\d+(\.\d+)?$/);
    expect(test.records[0]).toMatchObject({ id: 'gsm8k/test/0', answer: '18' });
  });

  it('MATH: 5,000 problems with a boxed answer; MATH-500: 500, answer field equals the last \\boxed{}', async () => {
    const math = await loadMath({ path: sharedData('math/test.jsonl') });
    expect(math.records).toHaveLength(5000);
    const levels = new Set(math.records.map((p) => p.meta?.level));
    expect([...levels].sort()).toEqual([1, 2, 3, 4, 5]);
    const m500 = await loadMath500({ path: sharedData('math500/test.jsonl') });
    expect(m500.records).toHaveLength(500);
    for (const p of m500.records) expect(lastBoxed(p.meta?.solution as string)).toBe(p.answer);
    expect(m500.records[0].id).toBe('test/precalculus/807.json');
  });

  it('ProcessBench: 3,400 records in the four subsets with the published label split', async () => {
    const { records } = await loadProcessBench({ path: sharedData('processbench') });
    expect(records).toHaveLength(3400);
    const count = (subset: string, pred: (label: number) => boolean) =>
      records.filter((r) => r.subset === subset && pred(r.label)).length;
    expect(
      ['gsm8k', 'math', 'olympiadbench', 'omnimath'].map((s) => [
        count(s, () => true),
        count(s, (l) => l === -1),
      ]),
    ).toEqual([
      [400, 193],
      [1000, 406],
      [1000, 339],
      [1000, 241],
    ]);
  });

  it('acceptance 4: paragraph segmentation of every ProcessBench record gives back its steps', async () => {
    const { records } = await loadProcessBench({ path: sharedData('processbench') });
    const mismatched = records.filter((r) => {
      const chunks = splitParagraphs(r.steps.join('\n\n')).map((c) => c.text.trim());
      return JSON.stringify(chunks) !== JSON.stringify(r.steps.map((s) => s.trim()));
    });
    expect(mismatched.map((r) => r.id)).toEqual([]);
    // Why it holds: no step contains a blank line (many contain single newlines, which stay inside a chunk).
    const steps = records.flatMap((r) => r.steps);
    expect(steps.filter((s) => /\n[ \t\r]*\n/.test(s))).toEqual([]);
    expect(steps.filter((s) => s.includes('\n')).length).toBeGreaterThan(1000);
  });

  it('HumanEval 164 and MBPP 974 (500 in the test split), as code problems', async () => {
    const he = await loadHumanEval({ path: sharedData('humaneval/HumanEval.jsonl') });
    const heGz = await loadHumanEval({ path: sharedData('humaneval/HumanEval.jsonl.gz') });
    expect([he.records.length, heGz.records.length]).toEqual([164, 164]);
    expect(he.records[163]).toMatchObject({ id: 'HumanEval/163', domain: 'code' });
    expect(he.records[0].answer).toContain('def check(candidate)');
    const mbpp = await loadMbpp({ path: sharedData('mbpp/mbpp.jsonl') });
    expect(mbpp.records).toHaveLength(974);
    expect((await loadMbpp({ path: sharedData('mbpp'), split: 'test' })).records).toHaveLength(500);
    expect(mbpp.records[0].answer.split('\n')).toHaveLength(3);
  });

  it('PRM800K examples: the same 12 rows from the JSONL, the pretty-printed and the concatenated files', async () => {
    const all = await loadPrm800k({ path: sharedData('prm800k-examples/prm800k_examples.jsonl') });
    const phase1 = await loadPrm800k({
      path: sharedData('prm800k-examples/prm800k-phase1-train-example.json'),
    });
    const phase2 = await loadPrm800k({
      path: sharedData('prm800k-examples/prm800k-phase2-train-example.jsonl'),
    });
    expect([all.records.length, phase1.records.length, phase2.records.length]).toEqual([12, 3, 9]);
    expect([...phase1.records, ...phase2.records].map((r) => r.steps)).toEqual(
      all.records.map((r) => r.steps),
    );
    expect(all.records.filter((r) => r.finishReason === 'found_error').every((r) => r.firstError >= 0)).toBe(
      true,
    );
    const neg = await loadPrm800k({
      path: sharedData('prm800k-examples'),
      split: 'prm800k_examples',
      neutralAs: 'negative',
    });
    const neutral = all.records.flatMap((r) => r.ratings).filter((x) => x === 0).length;
    const flips = all.records.flatMap((r, i) =>
      r.labels.filter((l, j) => l !== neg.records[i].labels[j]),
    ).length;
    expect(neutral).toBeGreaterThan(0);
    expect(flips).toBe(neutral);
  });

  it('loadProblems resolves $STEPWISE_DATA when no path is given', async () => {
    sharedData();
    const { problems, path } = await loadProblems('math500', { limit: 3 });
    expect(path).toBe(sharedData('math500/test.jsonl'));
    expect(problems).toHaveLength(3);
  });
});
