import { appendFileSync, closeSync, openSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IndexCache, MAX_LINE_BYTES, predictionClass } from '../../src/server/jsonl-index.js';
import {
  comparePairs,
  filterDefs,
  findId,
  matchingRecords,
  pairedDifference,
  pairRecords,
  readRecords,
  tQuantile975,
} from '../../src/server/jsonl-query.js';
import { tempDir } from '../support/temp.js';

/**
 * The JSONL index behind the web view's pages and filters: offsets and filter fields read once,
 * extended when the file grows, rebuilt when it is replaced; filters, text and id search over it;
 * the pairing of two search files and the paired difference's interval.
 */

const dir = tempDir('stepwise-index-');
const lines = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');
/** A file's index through the cache, as the server gets it (the file opened, then indexed). */
async function indexed(cache: IndexCache, path: string, kind: Parameters<IndexCache['get']>[2]) {
  const fd = openSync(path, 'r');
  const { index, ready } = cache.get(path, fd, kind);
  await ready;
  return { index, fd, close: () => closeSync(fd) };
}
// Old enough that a last line without a newline counts as settled.
const settle = (path: string) =>
  utimesSync(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

const label = (id: string, fe: Record<string, number>, q0: number, correct: boolean) => ({
  id,
  problem: `problem ${id}`,
  answer: '1',
  q0,
  chunks: [
    { text: 'a', q: q0, rollouts: 4, labels: {} },
    { text: 'b', q: q0 / 2, rollouts: 4, labels: {} },
  ],
  firstError: fe,
  finalAnswerCorrect: correct,
  search: 'linear',
  cost: { rollouts: 8, tokens: 100 },
});

describe('JSONL index', () => {
  it('indexes records (not blank lines), reports bad lines by number, and reads pages from offsets', async () => {
    const path = join(dir, 'mixed.jsonl');
    writeFileSync(
      path,
      `${JSON.stringify({ id: 'a' })}\n\n{not json\n${JSON.stringify({ id: 'b', text: 'x\ny' })}\r\n`,
    );
    const cache = new IndexCache();
    const { index, fd, close } = await indexed(cache, path, 'jsonl');
    try {
      expect(index.records).toBe(3);
      const read = await readRecords(index, fd, [0, 1, 2]);
      expect(read.map((r) => r.bad)).toEqual([false, true, false]);
      expect(read[1].line).toBe(3);
      expect(read[2].value).toEqual({ id: 'b', text: 'x\ny' });
      expect(await findId(index, fd, 'b')).toBe(2);
      expect(await findId(index, fd, 'nope')).toBe(-1);
    } finally {
      close();
    }
  });

  it('a growing file is extended (a partial last line waits for its newline); a replaced or shrunk file is indexed anew', async () => {
    const path = join(dir, 'grow.jsonl');
    writeFileSync(path, lines([{ id: 'r0' }, { id: 'r1' }]));
    const cache = new IndexCache();
    const first = await indexed(cache, path, 'jsonl');
    first.close();
    expect(first.index.records).toBe(2);
    // A job mid-write: one more record and half of the next.
    appendFileSync(path, `${JSON.stringify({ id: 'r2' })}\n{"id":"r`);
    const grown = await indexed(cache, path, 'jsonl');
    grown.close();
    expect(grown.index).toBe(first.index);
    expect(grown.index.records).toBe(3);
    expect(grown.index.indexedBytes).toBeLessThan(grown.index.size);
    appendFileSync(path, '3"}\n');
    const done = await indexed(cache, path, 'jsonl');
    expect(done.index.records).toBe(4);
    expect((await readRecords(done.index, done.fd, [3]))[0].value).toEqual({ id: 'r3' });
    done.close();
    // Replaced by another file (another inode): a new index.
    const other = join(dir, 'grow.tmp');
    writeFileSync(other, lines([{ id: 'z' }]));
    renameSync(other, path);
    const replaced = await indexed(cache, path, 'jsonl');
    replaced.close();
    expect(replaced.index).not.toBe(first.index);
    expect(replaced.index.records).toBe(1);
    // A settled file whose last line has no newline: that line is a record.
    writeFileSync(path, `${JSON.stringify({ id: 'p' })}\n${JSON.stringify({ id: 'q' })}`);
    settle(path);
    const tail = await indexed(cache, path, 'jsonl');
    expect(tail.index.records).toBe(2);
    expect(await findId(tail.index, tail.fd, 'q')).toBe(1);
    tail.close();
  });

  it('a request that comes while the file is being indexed waits for the whole index, not a part of it', async () => {
    const path = join(dir, 'building.jsonl');
    // Over 4 MiB: the build reads it in more than one window, with the event loop free between them.
    writeFileSync(
      path,
      lines(Array.from({ length: 30_000 }, (_, i) => ({ id: `b${i}`, pad: 'x'.repeat(200) }))),
    );
    const cache = new IndexCache();
    const fd1 = openSync(path, 'r');
    const fd2 = openSync(path, 'r');
    try {
      const first = cache.get(path, fd1, 'jsonl');
      // The second request comes once the build has read its first window.
      while (first.index.records === 0) await new Promise((done) => setImmediate(done));
      const second = cache.get(path, fd2, 'jsonl');
      await second.ready;
      expect(second.index.records).toBe(30_000);
      await first.ready;
    } finally {
      closeSync(fd1);
      closeSync(fd2);
    }
  });

  it('a line longer than the longest record the view reads is a bad record, never parsed', async () => {
    const path = join(dir, 'long.jsonl');
    const fd = openSync(path, 'w');
    writeFileSync(fd, `${JSON.stringify({ id: 'a' })}\n"`);
    const chunk = 'x'.repeat(1 << 20);
    for (let i = 0; i <= MAX_LINE_BYTES >> 20; i++) writeFileSync(fd, chunk);
    writeFileSync(fd, `"\n${JSON.stringify({ id: 'b' })}\n`);
    closeSync(fd);
    const { index, fd: rfd, close } = await indexed(new IndexCache(), path, 'jsonl');
    try {
      expect(index.records).toBe(3);
      const read = await readRecords(index, rfd, [0, 1, 2]);
      expect(read.map((r) => r.bad)).toEqual([false, true, false]);
    } finally {
      close();
    }
  });

  it('labels: filters on first error per signal, signal disagreement, Q̂ range and the final answer, with counts per choice', async () => {
    const path = join(dir, 'labels.jsonl');
    writeFileSync(
      path,
      lines([
        label('s0', { 'abs-q': -1, 'rel-effective': -1 }, 0.9, true),
        label('s1', { 'abs-q': 1, 'rel-effective': 1 }, 0.5, false),
        label('s2', { 'abs-q': 0, 'rel-effective': 1 }, 0.25, false),
        label('s3', { 'abs-q': 12, 'rel-effective': 12 }, 0.1, false),
      ]),
    );
    const { index, fd, close } = await indexed(new IndexCache(), path, 'labels');
    try {
      const m = async (f: Record<string, string>, text?: string) => [
        ...((await matchingRecords(index, fd, f, text)) ?? []),
      ];
      expect(await m({ fe: 'none' })).toEqual([0]);
      expect(await m({ fe: 'any' })).toEqual([1, 2, 3]);
      expect(await m({ fe: '1' })).toEqual([1]);
      expect(await m({ fe: '1', signal: 'rel-effective' })).toEqual([1, 2]);
      expect(await m({ fe: '10+' })).toEqual([3]);
      expect(await m({ disagree: 'yes' })).toEqual([2]);
      expect(await m({ qlo: '0.2', qhi: '0.5' })).toEqual([1, 2]);
      expect(await m({ qof: 'min', qhi: '0.15' })).toEqual([2, 3]);
      expect(await m({ final: 'correct' })).toEqual([0]);
      expect(await m({ final: 'wrong', disagree: 'no' })).toEqual([1, 3]);
      expect(await matchingRecords(index, fd, {}, undefined)).toBeNull();
      // Text search is case-insensitive and combines with the filters.
      expect(await m({}, 'PROBLEM S2')).toEqual([2]);
      expect(await m({ final: 'correct' }, 'problem s2')).toEqual([]);
      await expect(m({ fe: 'soon' })).rejects.toThrow(/fe must be one of/);
      await expect(m({ signal: 'sorm', fe: 'any' })).rejects.toThrow(/signal must be one of/);
      const defs = filterDefs(index, {});
      const fe = defs.find((d) => d.param === 'fe');
      expect(fe?.type === 'choice' && fe.choices.find((c) => c.value === 'any')?.count).toBe(3);
    } finally {
      close();
    }
  });

  it('search, predictions and eval-chunk rows: the filters of their kind', async () => {
    const search = join(dir, 'search.jsonl');
    const rec = (
      id: string,
      correct: boolean | undefined,
      stats: Record<string, number>,
      answer: string | null,
    ) => ({
      id,
      strategy: 'chunk-reset',
      gold: '1',
      answer,
      ...(correct === undefined ? {} : { correct }),
      finalText: 'x',
      chunks: [],
      cost: {
        policy: { calls: 1, promptTokens: 10, completionTokens: 5 },
        judge: { calls: 1, promptTokens: 3, completionTokens: 2 },
      },
      stats,
    });
    writeFileSync(
      search,
      lines([
        rec('p0', true, { resets: 0, fallbacks: 0 }, '1'),
        rec('p1', false, { resets: 2, fallbacks: 1, formatFailures: 1 }, '2'),
        rec('p2', undefined, { resets: 1, fallbacks: 0 }, null),
      ]),
    );
    const cache = new IndexCache();
    const s = await indexed(cache, search, 'search');
    const m = async (index: typeof s.index, fd: number, f: Record<string, string>) => [
      ...((await matchingRecords(index, fd, f, undefined)) ?? []),
    ];
    expect(await m(s.index, s.fd, { correct: 'wrong' })).toEqual([1]);
    expect(await m(s.index, s.fd, { correct: 'unchecked' })).toEqual([2]);
    expect(await m(s.index, s.fd, { resets: 'with' })).toEqual([1, 2]);
    expect(await m(s.index, s.fd, { fallbacks: 'with' })).toEqual([1]);
    expect(await m(s.index, s.fd, { format: 'with' })).toEqual([1]);
    expect(await m(s.index, s.fd, { answer: 'with' })).toEqual([2]);
    expect(s.index.cols.tokens.get(0)).toBe(20);
    s.close();

    const preds = join(dir, 'predictions.jsonl');
    writeFileSync(
      preds,
      lines([
        { id: 'a', subset: 'gsm8k', label: 2, prediction: 2 },
        { id: 'b', subset: 'gsm8k', label: 3, prediction: 1 },
        { id: 'c', subset: 'math', label: 1, prediction: 4 },
        { id: 'd', subset: 'math', label: 2, prediction: -1 },
        { id: 'e', subset: 'math', label: -1, prediction: 0 },
        { id: 'f', subset: 'math', label: 0, prediction: null },
      ]),
    );
    const p = await indexed(cache, preds, 'predictions');
    expect(await m(p.index, p.fd, { pred: 'exact' })).toEqual([0]);
    expect(await m(p.index, p.fd, { pred: 'early' })).toEqual([1, 4]);
    expect(await m(p.index, p.fd, { pred: 'late' })).toEqual([2]);
    expect(await m(p.index, p.fd, { pred: 'missed' })).toEqual([3]);
    expect(await m(p.index, p.fd, { pred: 'none' })).toEqual([5]);
    expect(predictionClass(-1, -1)).toBe('exact');
    p.close();

    const chunks = join(dir, 'chunks.jsonl');
    const row = (solution: string, agrees: boolean | null) => ({
      solution,
      chunk: 0,
      text: 't',
      label: agrees === null ? null : true,
      q: 0.5,
      verdict: 'positive',
      score: 0.9,
      agrees,
    });
    writeFileSync(chunks, lines([row('x', true), row('x', false), row('y', null)]));
    const c = await indexed(cache, chunks, 'chunk-judgments');
    expect(await m(c.index, c.fd, { agree: 'disagree' })).toEqual([1]);
    expect(await m(c.index, c.fd, { agree: 'none' })).toEqual([2]);
    expect(await findId(c.index, c.fd, 'y')).toBe(2);
    expect(c.index.summaryResult()).toMatchObject({
      kind: 'chunk-judgments',
      chunks: 3,
      solutions: 2,
      disagree: 1,
    });
    c.close();
  });

  it('pairs two search files by problem id and gives the paired difference with a t interval', async () => {
    const rec = (id: string, correct: boolean) => ({
      id,
      strategy: 's',
      answer: '1',
      correct,
      finalText: '',
      chunks: [],
      cost: {},
      stats: {},
    });
    const a = join(dir, 'A.jsonl');
    const b = join(dir, 'B.jsonl');
    writeFileSync(a, lines([rec('q1', true), rec('q2', false), rec('q3', false), rec('only-a', true)]));
    writeFileSync(b, lines([rec('q3', true), rec('q2', true), rec('q1', true), rec('only-b', false)]));
    const cache = new IndexCache();
    const A = await indexed(cache, a, 'search');
    const B = await indexed(cache, b, 'search');
    try {
      const pairing = pairRecords(A.index, B.index);
      expect([...pairing.a]).toEqual([0, 1, 2]);
      expect([...pairing.b]).toEqual([2, 1, 0]);
      expect([pairing.onlyA, pairing.onlyB]).toEqual([1, 1]);
      expect([...(comparePairs(A.index, B.index, pairing, 'b') ?? [])]).toEqual([1, 2]);
      expect([...(comparePairs(A.index, B.index, pairing, 'same') ?? [])]).toEqual([0]);
    } finally {
      A.close();
      B.close();
    }
    // Differences 0, 1, 1: mean 2/3, sd 0.577, t(2) = 4.303.
    const d = pairedDifference([0, 1, 1]);
    expect(d.mean).toBeCloseTo(2 / 3, 10);
    expect(d.high! - d.mean!).toBeCloseTo((4.303 * Math.sqrt(1 / 3)) / Math.sqrt(3), 3);
    expect(tQuantile975(1000)).toBeCloseTo(1.962, 3);
    expect(pairedDifference([1]).low).toBeNull();
  });

  it('holds a few dozen bytes a record, not the records', async () => {
    const path = join(dir, 'many.jsonl');
    const rows = Array.from({ length: 20_000 }, (_, i) =>
      label(`m${i}`, { 'abs-q': (i % 5) - 1 }, 0.5, i % 2 === 0),
    );
    writeFileSync(path, lines(rows));
    const { index, close } = await indexed(new IndexCache(), path, 'labels');
    close();
    expect(index.records).toBe(20_000);
    // Typed arrays grow by doubling: at most twice what 20,000 records need.
    expect(index.bytes / index.records).toBeLessThan(160);
  });
});
