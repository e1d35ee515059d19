import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChunkJudgmentRow,
  calibrationOf,
  chunkRowsPath,
  evaluateChunks,
  readLabeledSolutions,
} from '../../src/evaluate/chunks.js';
import { createJudge } from '../../src/judge/create.js';
import { simProcessBenchRows } from '../../src/sim/dataset.js';
import { wrongChunks } from '../../src/sim/policy.js';
import { lookupSimQuestion } from '../../src/sim/world.js';
import { runCli } from '../data/run-cli.js';
import { providers } from '../support/providers.js';
import { tempDir } from '../support/temp.js';

let dir: string;
let labelsFile: string;

beforeAll(() => {
  dir = tempDir('stepwise-chunks-');
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
      judge: await createJudge('generative:sim?judge=perfect', { providers }),
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
      judge: await createJudge('generative:sim?sensitivity=0.7&specificity=0.9', { providers }),
      solutions,
      signal: 'abs-q',
    });
    expect(noisy.n).toBe(perfect.n);
    expect(Math.abs(noisy.recall_negative! - 0.7)).toBeLessThan(0.06);
    expect(Math.abs(noisy.recall_positive! - 0.9)).toBeLessThan(0.03);
    expect(noisy.balanced_accuracy).toBeCloseTo((noisy.recall_negative! + noisy.recall_positive!) / 2, 12);
  });

  it('writes one row per chunk (label and Q̂ beside verdict and score) and bins scores against Q̂', async () => {
    // Q̂ made up per chunk (0.2 on negative chunks, 0.8 on positive ones) so the calibration is known.
    const withQ = readLabeledSolutions(labelsFile, 'abs-q')
      .slice(0, 60)
      .map((s) => ({ ...s, q: s.labels.map((l) => (l ? 0.8 : 0.2)) }));
    const rowsPath = chunkRowsPath(join(dir, 'eval.json'));
    expect(rowsPath).toBe(join(dir, 'eval.chunks.jsonl'));
    const report = await evaluateChunks({
      judge: await createJudge('generative:sim?judge=perfect', { providers }),
      solutions: withQ,
      signal: 'abs-q',
      rowsPath,
    });
    expect(report.chunkRows).toBe('eval.chunks.jsonl');
    const rows = readFileSync(rowsPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ChunkJudgmentRow);
    const chunks = withQ.reduce((k, s) => k + s.chunks.length, 0);
    expect(rows).toHaveLength(chunks);
    // Input order, every chunk with its own text, label and Q̂.
    expect(rows[0]).toMatchObject({ solution: withQ[0].id, chunk: 0, text: withQ[0].chunks[0] });
    const k = withQ[0].chunks.length;
    expect(rows[k]).toMatchObject({ solution: withQ[1].id, chunk: 0 });
    for (const r of rows) {
      expect(r.q).toBe(r.label ? 0.8 : 0.2);
      expect(r.verdict).toBe(r.label ? 'positive' : 'negative');
      expect(r.agrees).toBe(true);
      expect(r.simulated).toBe(true);
    }
    expect(rows.filter((r) => r.agrees).length).toBe(report.n);
    // A perfect judge's scores sit at 1 on positive chunks and 0 on negative ones: two bins.
    const used = report.calibration.bins.filter((b) => b.n > 0);
    expect(used.map((b) => [b.lo, b.n])).toEqual([
      [0, rows.filter((r) => !r.label).length],
      [0.9, rows.filter((r) => r.label).length],
    ]);
    expect(used[0].meanQ).toBeCloseTo(0.2, 9);
    expect(used[1].meanQ).toBeCloseTo(0.8, 9);
    expect(report.calibration.n).toBe(chunks);
    expect(report.calibration.gap).toBeCloseTo(0.2, 12);
  });

  it('calibrationOf: ten bins by score, counts, mean score and Q̂, rows without a score or Q̂ left out', () => {
    const row = (score: number | null, q: number | null, label: boolean | null): ChunkJudgmentRow => ({
      solution: 's',
      chunk: 0,
      text: '',
      label,
      q,
      verdict: score === null ? null : score >= 0.5 ? 'positive' : 'negative',
      score,
      agrees: null,
    });
    const c = calibrationOf([
      row(0.05, 0.1, false),
      row(0.15, 0.3, false),
      row(0.12, 0.5, true),
      row(1, 1, true),
      row(0.95, 0.5, null),
      row(null, 0.5, true),
      row(0.5, null, true),
    ]);
    expect(c.bins).toHaveLength(10);
    expect(c.n).toBe(5);
    expect(c.bins[0]).toMatchObject({ n: 1, meanScore: 0.05, meanQ: 0.1, positiveShare: 0 });
    expect(c.bins[1].n).toBe(2);
    expect(c.bins[1].meanQ).toBeCloseTo(0.4, 12);
    expect(c.bins[1].positiveShare).toBe(0.5);
    expect(c.bins[9].n).toBe(2);
    expect(c.bins[9].meanScore).toBeCloseTo(0.975, 12);
    expect(c.bins[9].positiveShare).toBe(1);
    expect(c.bins[5]).toMatchObject({ n: 0, meanScore: null, meanQ: null, positiveShare: null });
    expect(c.gap).toBeCloseTo((0.05 + 2 * Math.abs(0.135 - 0.4) + 2 * 0.225) / 5, 12);
  });

  it('stepwise eval chunks --out writes the per-chunk rows beside the report and names them in it', () => {
    const small = join(dir, 'small.jsonl');
    writeFileSync(small, `${readFileSync(labelsFile, 'utf8').trim().split('\n').slice(0, 12).join('\n')}\n`);
    const out = join(dir, 'cli-report.json');
    const run = runCli([
      'eval',
      'chunks',
      '--input',
      small,
      '--judge',
      'sim:generative',
      '--signal',
      'abs-q',
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.chunkRows).toBe('cli-report.chunks.jsonl');
    expect(report.calibration.bins).toHaveLength(10);
    const rows = readFileSync(join(dir, 'cli-report.chunks.jsonl'), 'utf8').trim().split('\n');
    expect(rows.length).toBe(report.n);
    expect(run.stderr).toContain('cli-report.chunks.jsonl');
  });
});
