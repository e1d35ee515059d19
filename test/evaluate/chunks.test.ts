import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateChunks, readLabeledSolutions } from '../../src/evaluate/chunks.js';
import { createJudge } from '../../src/judge/create.js';
import { simProcessBenchRows } from '../../src/sim/dataset.js';
import { wrongChunks } from '../../src/sim/policy.js';
import { lookupSimQuestion } from '../../src/sim/world.js';

let dir: string;
let labelsFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepwise-chunks-'));
  // A label file in the `stepwise label` layout whose labels are the sim world's truth (a chunk
  // is negative when it introduces an error), so a judge's recall per class is known in advance.
  const rows = simProcessBenchRows({ count: 400, errorShare: 0.6 }, { seed: 5, stepError: 0.15 });
  const lines = rows.map((r) => {
    const wrong = wrongChunks(lookupSimQuestion(r.problem)!, r.steps);
    return JSON.stringify({
      id: r.id,
      problem: r.problem,
      answer: '0',
      q0: null,
      chunks: r.steps.map((text, i) => ({ text, q: null, rollouts: 0, labels: { 'abs-q': !wrong[i] } })),
      firstError: { 'abs-q': wrong.indexOf(true) },
      finalAnswerCorrect: r.final_answer_correct,
      search: 'linear',
      cost: { rollouts: 0, tokens: 0 },
    });
  });
  labelsFile = join(dir, 'labels.jsonl');
  writeFileSync(labelsFile, `${lines.join('\n')}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('eval chunks', () => {
  it('reads the label file and names missing signals', () => {
    const s = readLabeledSolutions(labelsFile, 'abs-q');
    expect(s).toHaveLength(400);
    expect(s[0].labels.length).toBe(s[0].chunks.length);
    expect(() => readLabeledSolutions(labelsFile, 'rel-ratio')).toThrow(
      /line 1, field "chunks\[0\]\.labels\.rel-ratio"/,
    );
  });

  it('a perfect judge scores 100%; a judge with set rates shows them as per-class recall', async () => {
    const solutions = readLabeledSolutions(labelsFile, 'abs-q');
    const perfect = await evaluateChunks({
      judge: await createJudge('generative:sim?judge=perfect'),
      solutions,
      signal: 'abs-q',
    });
    expect(perfect).toMatchObject({
      accuracy: 1,
      balanced_accuracy: 1,
      recall_positive: 1,
      recall_negative: 1,
    });
    expect(perfect.first_error_accuracy).toBe(1);
    expect(perfect.simulated).toBe(true);
    expect(perfect.negatives).toBeGreaterThan(200);

    const noisy = await evaluateChunks({
      judge: await createJudge('generative:sim?sensitivity=0.7&specificity=0.9'),
      solutions,
      signal: 'abs-q',
    });
    expect(noisy.n).toBe(perfect.n);
    expect(Math.abs(noisy.recall_negative! - 0.7)).toBeLessThan(0.06);
    expect(Math.abs(noisy.recall_positive! - 0.9)).toBeLessThan(0.03);
    expect(noisy.balanced_accuracy).toBeCloseTo((noisy.recall_negative! + noisy.recall_positive!) / 2, 12);
  });
});
