import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 16, acceptance 3: `export --task sorm --format trl` from a sim `label --signals sorm`
 * file writes one row per prefix, at least three prefix lengths, and per length the rows with a
 * positive and a negative last label differ by at most one.
 */

const dir = tempDir('stepwise-sorm-cli-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

async function cli(args: string[]): Promise<string> {
  const r = await startCli(args, join(dir, 'home')).done;
  expect(r.stderr).not.toMatch(/unexpected error/);
  expect(r.code).toBe(0);
  return r.stdout;
}

describe('export --task sorm --format trl from a sim label file', () => {
  it('one row per prefix, ≥ 3 prefix lengths, |positives − negatives| ≤ 1 per length on the last label', async () => {
    const pb = join(dir, 'pb.jsonl');
    const labels = join(dir, 'labels.jsonl');
    const out = join(dir, 'sorm.jsonl');
    await cli(['sim', 'dataset', '--processbench', '--count', '40', '--out', pb]);
    await cli([
      'label',
      '--input',
      pb,
      '--policy',
      'sim',
      '--rollouts',
      '8',
      '--signals',
      'sorm',
      '--out',
      labels,
      '--no-cache',
    ]);
    const summary = JSON.parse(
      await cli(['export', '--from', labels, '--task', 'sorm', '--format', 'trl', '--out', out, '--json']),
    );
    const labeled = new Map(lines(labels).map((r) => [r.id, r]));
    const rows = lines(out);
    expect(rows.length).toBe(summary.rows);
    const byLength = new Map<number, { pos: number; neg: number }>();
    const ids = new Set<string>();
    for (const r of rows) {
      // One row per prefix: `<solution>@<k>` holds the solution's first k steps and their labels.
      expect(ids.has(r.id)).toBe(false);
      ids.add(r.id);
      const at = r.id.lastIndexOf('@');
      const src = labeled.get(r.id.slice(0, at));
      const k = Number(r.id.slice(at + 1));
      expect(src).toBeDefined();
      expect(r.prompt).toBe(src.problem);
      expect(r.completions).toEqual(src.chunks.slice(0, k).map((c: { text: string }) => c.text));
      expect(r.labels).toHaveLength(k);
      // SORM labels after backward propagation: positives form a prefix of the steps.
      const lastPositive = r.labels.lastIndexOf(true);
      expect(r.labels.slice(0, lastPositive + 1).every(Boolean)).toBe(true);
      const b = byLength.get(k) ?? { pos: 0, neg: 0 };
      if (r.labels[k - 1]) b.pos++;
      else b.neg++;
      byLength.set(k, b);
    }
    expect(byLength.size).toBeGreaterThanOrEqual(3);
    for (const [, b] of byLength) expect(Math.abs(b.pos - b.neg)).toBeLessThanOrEqual(1);
    // Balancing really dropped something (the sim's positives outnumber its negatives).
    const perLength = Object.values(summary.byPrefixLength) as Array<{ kept: number; dropped: number }>;
    expect(perLength.reduce((a, b) => a + b.dropped, 0)).toBeGreaterThan(0);
    expect(perLength.reduce((a, b) => a + b.kept, 0)).toBe(rows.length);
  });
});
