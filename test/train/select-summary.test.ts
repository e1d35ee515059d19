import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * `select`'s summary counts the problems where the judge-selected and outcome-only training sets
 * differ. A policy that writes one solution many times gives many identical correct samples: the
 * judge's pick and the random pick are then different samples with one text, and the sets are the
 * same there. The tiny world's data selection run (docs/tiny.md) said "differs on 1375 problems"
 * when the texts differed on 52 of 1,817: the count compared sample indices.
 */
describe('select summary: picks differ by text, not by sample index', () => {
  it('problems whose correct samples are copies of one text count as the same, not as differing', async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    const dir = tempDir('stepwise-select-summary-');
    const home = join(dir, 'home');
    const samples = join(dir, 'samples.jsonl');
    const s = await startCli(
      ['sample', '--dataset', 'sim', '--count', '16', '--policy', 'sim', '--n', '4', '--out', samples],
      home,
    ).done;
    expect(s.code, s.stderr).toBe(0);
    // Even problems: every sample becomes a copy of the first correct one (one text, four samples).
    const copied = new Set<string>();
    const rows = readFileSync(samples, 'utf8')
      .trim()
      .split('\n')
      .map((l, i) => {
        const row = JSON.parse(l) as { id: string; samples: Array<{ correct: boolean }> };
        const first = row.samples.find((x) => x.correct);
        if (i % 2 === 0 && first) {
          copied.add(row.id);
          row.samples = row.samples.map(() => structuredClone(first));
        }
        return JSON.stringify(row);
      });
    writeFileSync(samples, `${rows.join('\n')}\n`);
    expect(copied.size).toBeGreaterThanOrEqual(6);
    const out = join(dir, 'picks.jsonl');
    const r = await startCli(
      ['select', '--input', samples, '--judge', 'sim:generative', '--seed', '3', '--out', out, '--json'],
      home,
    ).done;
    expect(r.code, r.stderr).toBe(0);
    const picks = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            id: string;
            chosen: { index: number; text: string } | null;
            outcomeOnly: { index: number; text: string } | null;
          },
      );
    const both = picks.filter((p) => p.chosen && p.outcomeOnly);
    const text = both.filter((p) => p.chosen!.text !== p.outcomeOnly!.text);
    const copies = both.filter(
      (p) => p.chosen!.text === p.outcomeOnly!.text && p.chosen!.index !== p.outcomeOnly!.index,
    );
    // The fixture has both kinds, and the copied problems can only be copies.
    expect(copies.filter((p) => copied.has(p.id)).length).toBeGreaterThanOrEqual(3);
    expect(text.filter((p) => copied.has(p.id))).toEqual([]);
    const summary = JSON.parse(r.stdout) as { differsFromOutcomeOnly: number; sameTextOtherSample: number };
    expect(summary.differsFromOutcomeOnly).toBe(text.length);
    expect(summary.sameTextOtherSample).toBe(copies.length);
    expect(r.stderr).toContain(`the judge's pick differs in text on ${text.length} problems`);
    expect(r.stderr).toContain(`on ${copies.length} more it is another sample with the same text`);
  }, 180_000);
});
