import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runUntilStopped } from '../support/cli.js';
import { tempDir } from './fixtures.js';

/**
 * Issue 17 for `export`: the label file is read a record at a time and the training set written as
 * it is built, so a big input does not raise peak memory — for the balancing tasks too (judge-rl
 * and sorm read the file twice: once for each candidate's class, once to write the kept ones) and
 * for Parquet (a row group at a time).
 */

const dir = tempDir('stepwise-export-scale-');
/** The old-space heap the export runs in: the streaming export keeps about 25 MB alive. */
const HEAP_CAP_MB = 48;

/** `count` label records of ~10 KB: 4 chunks of ~2.5 KB, the first error at chunk s mod 5 (0–2) or none. */
function writeLabels(file: string, count: number): void {
  const fd = openSync(file, 'w');
  const pad = 'carryingonwards '.repeat(160); // 160 estimated tokens: no prompt is too long
  try {
    let batch: string[] = [];
    for (let s = 0; s < count; s++) {
      const bad = s % 5 <= 2 ? s % 5 : -1;
      const chunks = [0, 1, 2, 3].map((i) => {
        const ok = bad < 0 || i < bad;
        return {
          text: `Step ${i}: ${s} + ${i} = ${s + i}, ${pad}`,
          q: ok ? 1 : 0,
          labels: { 'abs-q': ok, sorm: ok },
        };
      });
      batch.push(
        JSON.stringify({ id: `p${s}#0`, problem: `What is ${s} + 3?`, answer: String(s + 3), chunks }),
      );
      if (batch.length === 500) {
        writeSync(fd, `${batch.join('\n')}\n`);
        batch = [];
      }
    }
    if (batch.length) writeSync(fd, `${batch.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}

const big = join(dir, 'big.jsonl');
const small = join(dir, 'small.jsonl');
writeLabels(big, 4000);
writeLabels(small, 100);

/** `stepwise export` run to the end; its exit code and peak RSS (MB). */
async function exportRss(input: string, task: string, format: string, out: string) {
  const r = await runUntilStopped(
    ['export', '--input', input, '--task', task, '--format', format, '--out', out, '--json'],
    join(dir, 'home'),
    () => false,
    1000,
    // A heap cap makes the check deterministic: without it V8 may leave ~90 MB of garbage
    // uncollected at exit, by timing alone (peak RSS 130-205 MB for one program, measured), and a
    // process that held the input (40 MB of text, several times that parsed) dies here outright.
    [`--max-old-space-size=${HEAP_CAP_MB}`],
  );
  expect(r.code, r.stderr).toBe(0);
  return { rssMb: r.rssMb, summary: JSON.parse(r.stdout) as { rows: number } };
}

describe('export at scale', () => {
  it('judge-rl as verl Parquet and sorm as TRL JSONL on a 40 MB label file: peak RSS within 40 MB of a 100-record run', async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: npm run build first');
    expect(statSync(big).size).toBeGreaterThan(38e6);
    // Per 5 solutions: 9 negative chunks of 20 (judge-rl keeps 9 + 9); prefixes of length 1–4 with
    // 1, 2, 3, 3 negatives (sorm keeps 2 + 4 + 4 + 4).
    for (const [task, format, ext, rows] of [
      ['judge-rl', 'verl', 'parquet', 14_400],
      ['sorm', 'trl', 'jsonl', 11_200],
    ] as const) {
      const baseline = await exportRss(small, task, format, join(dir, `small.${task}.${ext}`));
      const out = join(dir, `big.${task}.${ext}`);
      const run = await exportRss(big, task, format, out);
      expect(run.summary.rows, task).toBe(rows);
      expect(statSync(out).size, task).toBeGreaterThan(format === 'verl' ? 1e6 : 20e6);
      // Holding the input (40 MB of text, several times that parsed) or the training set (judge
      // prompts repeat each solution's history) would add well over 100 MB.
      expect(run.rssMb, `${task}: ${run.rssMb} MB vs ${baseline.rssMb} MB`).toBeLessThan(baseline.rssMb + 40);
    }
    const firstLine = readFileSync(join(dir, 'big.sorm.jsonl'), 'utf8').slice(0, 200);
    expect(firstLine).toMatch(/^\{"id":"p0#0@1"/);
  }, 600_000);
});
