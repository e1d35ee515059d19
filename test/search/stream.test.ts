import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeJsonl } from '../../src/jobs/merge.js';
import { searchDataset } from '../../src/search/dataset.js';
import { liveHeapBytes } from '../support/heap.js';
import { boxedChecker as checker, fakeJudge, fakePolicy, fakeProblem } from './fakes.js';

/** Issue 17: `search` streams its records (appended, ordered at the end, never held), resumes by key, shards. */

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepwise-search-stream-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; correct?: boolean; finalText: string; cost: unknown });

describe('search streams', () => {
  it('does not hold the records: live heap after a 15 MB job grows by far less than its output', async () => {
    const problems = Array.from({ length: 30 }, (_, i) => fakeProblem(`big${i}`, 4));
    // Each step ~60 KB: every record carries ~0.5 MB of text (final text, chunks, trace).
    const { policy } = fakePolicy({ stepError: 0, step: (i) => `step ${i + 1} ok ${'x'.repeat(60_000)}` });
    const out = join(dir, 'big.jsonl');
    const before = liveHeapBytes();
    const { summary } = await searchDataset({ problems, strategy: 'sample', deps: { policy, checker }, out });
    const grown = liveHeapBytes() - before;
    const written = statSync(out).size;
    expect(summary.problems).toBe(30);
    expect(summary.correct).toBe(30);
    expect(written).toBeGreaterThan(12e6);
    expect(grown).toBeLessThan(written / 5);
    expect(lines(out).map((r) => r.id)).toEqual(problems.map((p) => p.id));
  }, 120_000);

  it('stopped midway and resumed: finished problems are kept, no id written twice, same summary', async () => {
    const problems = Array.from({ length: 24 }, (_, i) => fakeProblem(`p${i}`, 3 + (i % 3)));
    const out = join(dir, 'resume.jsonl');
    const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
    const stop = new AbortController();
    const first = fakePolicy({ stepError: 0.2 });
    await searchDataset({
      problems,
      strategy: 'chunk-reset',
      deps: { policy: first.policy, judge, checker, signal: stop.signal },
      out,
      concurrency: 3,
      onProgress: (p) => {
        if (p.done >= 8) stop.abort();
      },
    });
    const kept = lines(out);
    expect(kept.length).toBeGreaterThanOrEqual(8);
    expect(kept.length).toBeLessThan(24);
    const second = fakePolicy({ stepError: 0.2 });
    const resumed = await searchDataset({
      problems,
      strategy: 'chunk-reset',
      deps: { policy: second.policy, judge, checker },
      out,
      concurrency: 3,
    });
    const all = lines(out);
    expect(all.map((r) => r.id)).toEqual(problems.map((p) => p.id));
    expect(resumed.resumed).toBe(kept.length);
    // The resumed run searched only what was missing.
    expect(second.counters.calls).toBeGreaterThan(0);
    const fresh = join(dir, 'fresh.jsonl');
    const whole = await searchDataset({
      problems,
      strategy: 'chunk-reset',
      deps: { policy: fakePolicy({ stepError: 0.2 }).policy, judge, checker },
      out: fresh,
      concurrency: 3,
    });
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(fresh, 'utf8'));
    expect(resumed.summary).toEqual(whole.summary);
  });

  it('three shards merged equal one unsharded run, line for line', async () => {
    const problems = Array.from({ length: 30 }, (_, i) => fakeProblem(`s${i}`, 3 + (i % 3)));
    const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
    const run = (out: string, shard?: { index: number; count: number }) =>
      searchDataset({
        problems,
        strategy: 'chunk-reset',
        deps: { policy: fakePolicy({ stepError: 0.2 }).policy, judge, checker },
        out,
        shard,
      });
    const full = join(dir, 'full.jsonl');
    await run(full);
    const parts: string[] = [];
    let total = 0;
    for (let k = 1; k <= 3; k++) {
      const part = join(dir, `part${k}.jsonl`);
      const r = await run(part, { index: k, count: 3 });
      expect(r.summary.problems).toBeGreaterThan(2);
      expect(r.summary.problems).toBeLessThan(20);
      total += r.summary.problems;
      parts.push(part);
    }
    expect(total).toBe(30);
    const merged = join(dir, 'merged.jsonl');
    const ids = join(dir, 'ids.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(ids, problems.map((p) => `${JSON.stringify({ id: p.id })}\n`).join(''));
    const m = mergeJsonl({ files: parts, input: ids, out: merged });
    expect(m).toMatchObject({ records: 30, duplicates: 0, conflicts: 0, missing: 0 });
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(full, 'utf8'));
    // A part resumed as another part is refused: its ids belong elsewhere.
    await expect(run(parts[0], { index: 2, count: 3 })).rejects.toThrow(/not in --shard 2\/3/);
  });
});
