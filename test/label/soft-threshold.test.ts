import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLabeledSolutions } from '../../src/evaluate/chunks.js';
import { summarizeRecords } from '../../src/server/summary.js';
import { labeledSteps } from '../../src/train/formats.js';
import { readLabelFile } from '../../src/train/label-file.js';
import { runCli } from '../data/run-cli.js';
import { tempDir } from '../support/temp.js';

/**
 * `--soft-threshold` decides where an ms-soft label turns negative in the label file; every
 * reader of that file (eval chunks, exports, web summaries) must draw the same line.
 */
describe('--soft-threshold is honoured wherever a soft label becomes a verdict', () => {
  it('label --soft-threshold 0.7: eval chunks, exports and the web summary read the file as it was labelled', () => {
    const dir = tempDir('stepwise-soft-');
    const samples = join(dir, 'samples.jsonl');
    const labels = join(dir, 'labels.jsonl');
    const sample = runCli([
      'sample',
      '--dataset',
      'sim',
      '--limit',
      '6',
      '--policy',
      'sim',
      '--n',
      '2',
      '--out',
      samples,
    ]);
    expect(sample.code, sample.stderr).toBe(0);
    const label = runCli([
      'label',
      '--input',
      samples,
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--signals',
      'ms-soft',
      '--soft-threshold',
      '0.7',
      '--rollouts',
      '8',
      '--out',
      labels,
    ]);
    expect(label.code, label.stderr).toBe(0);

    const rows = readFileSync(labels, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const soft = rows.flatMap((r) =>
      r.chunks.map((c: { labels: { 'ms-soft': number } }) => c.labels['ms-soft']),
    );
    // The threshold matters on this file: some chunks are positive at 0.5 but not at 0.7.
    const between = soft.filter((q: number) => q >= 0.5 && q < 0.7).length;
    expect(between).toBeGreaterThan(0);

    const evalRows = readLabeledSolutions(labels, 'ms-soft');
    const exportRows = readLabelFile(labels);
    let positives = 0;
    let labelled = 0;
    rows.forEach((r, i) => {
      const fe: number = r.firstError['ms-soft'];
      const wanted = r.chunks.map((c: { labels: { 'ms-soft': number } }) => c.labels['ms-soft'] >= 0.7);
      expect(wanted.indexOf(false)).toBe(fe);
      // eval chunks: the same verdicts, so its first error is the file's.
      expect(evalRows[i].labels).toEqual(wanted);
      expect(evalRows[i].labels.indexOf(false)).toBe(evalRows[i].firstError);
      // Exports (prm, sorm, judge-rl go through labeledSteps): the same verdicts.
      expect(labeledSteps(exportRows[i], 'ms-soft').labels).toEqual(wanted);
      positives += wanted.filter(Boolean).length;
      labelled += wanted.length;
    });
    // The web view's summary of the file counts the same positives.
    const summary = summarizeRecords('labels', rows) as { positiveShare: Record<string, number> };
    expect(summary.positiveShare['ms-soft']).toBeCloseTo(positives / labelled, 12);
  }, 240_000);
});

describe('default rollouts per prefix follow the signals’ papers', () => {
  it('label draws 8 (Math-Shepherd N, SORM K) for ms-*/sorm alone and 16 (StepWiser M) as soon as a StepWiser signal is asked', () => {
    const dir = tempDir('stepwise-rollouts-');
    const samples = join(dir, 'samples.jsonl');
    expect(
      runCli(['sample', '--dataset', 'sim', '--limit', '2', '--policy', 'sim', '--n', '1', '--out', samples])
        .code,
    ).toBe(0);
    for (const [signals, m] of [
      ['sorm', 8],
      ['ms-hard,ms-soft', 8],
      ['sorm,abs-q', 16],
    ] as const) {
      const out = join(dir, `${signals}.jsonl`);
      const r = runCli([
        'label',
        '--input',
        samples,
        '--dataset',
        'sim',
        '--policy',
        'sim',
        '--signals',
        signals,
        '--out',
        out,
      ]);
      expect(r.code, r.stderr).toBe(0);
      for (const row of readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))) {
        // Every prefix but the whole solution (checked, not rolled out from) gets M rollouts.
        const counts = row.chunks.map((c: { rollouts: number }) => c.rollouts);
        expect(
          counts.slice(0, -1).every((n: number) => n === m),
          signals,
        ).toBe(true);
        expect(row.job.settings.rollouts).toBe(m);
      }
    }
  }, 240_000);
});
