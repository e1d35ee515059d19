import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countLines, readLinesSync, streamJsonl } from '../../src/jobs/lines.js';
import { OrderedOutput } from '../../src/jobs/ordered-output.js';
import { inShard, parseShard, runStreamJob } from '../../src/jobs/run-job.js';
import { tempDir } from '../support/temp.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('stepwise-stream-');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Rec {
  id: string;
  v: number;
}
const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);

function* items(n: number) {
  for (let i = 0; i < n; i++) yield { id: `k${i}`, v: i };
}

describe('readLinesSync / streamJsonl', () => {
  it('yields lines with byte offsets across chunk boundaries and flags a torn last line', () => {
    const f = join(dir, 'a.jsonl');
    const long = 'é'.repeat(700_000); // 1.4 MB: spans the 1 MB read chunk
    writeFileSync(f, `{"a":1}\n"${long}"\n\n{"b":2`);
    const got = [...readLinesSync(f)];
    expect(got.map((l) => [l.line, l.offset, l.partial])).toEqual([
      [1, 0, false],
      [2, 8, false],
      [3, 8 + Buffer.byteLength(`"${long}"`) + 1, false],
      [4, 8 + Buffer.byteLength(`"${long}"`) + 2, true],
    ]);
    expect(got[1].text).toBe(`"${long}"`);
    expect(countLines(f)).toBe(4);
    expect(() => [...streamJsonl(f)]).toThrow(/a\.jsonl, line 4: not valid JSON/);
  });
});

describe('runStreamJob', () => {
  it('writes the output in input order whatever order work finishes in', async () => {
    const out = join(dir, 'o.jsonl');
    const r = await runStreamJob<Rec, Rec>({
      items: items(50),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out,
      concurrency: 7,
      process: async (x) => {
        await new Promise((res) => setTimeout(res, (x.v * 7) % 5));
        return { ...x };
      },
    });
    expect(r).toMatchObject({ items: 50, done: 50, resumed: 0, finalized: true });
    expect(lines(out).map((x) => x.v)).toEqual([...Array(50).keys()]);
  });

  it('takes input lazily: never more than concurrency items ahead of the work', async () => {
    let pulled = 0;
    let finished = 0;
    let maxAhead = 0;
    function* counted() {
      for (let i = 0; i < 200; i++) {
        pulled++;
        maxAhead = Math.max(maxAhead, pulled - finished);
        yield { id: `k${i}`, v: i };
      }
    }
    await runStreamJob<Rec, Rec>({
      items: counted(),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out: join(dir, 'o.jsonl'),
      concurrency: 4,
      process: async (x) => {
        await new Promise((res) => setImmediate(res));
        finished++;
        return x;
      },
    });
    expect(maxAhead).toBeLessThanOrEqual(4);
  });

  it('resumes by key after a torn write, never writing a key twice', async () => {
    const out = join(dir, 'o.jsonl');
    // An interrupted run: records 3, 1 finished out of order, then a torn line and a corrupt one.
    writeFileSync(out, '{"id":"k3","v":3}\n{"id":"k1","v":1}\nnot json\n{"id":"k5","v"');
    const processed: string[] = [];
    const r = await runStreamJob<Rec, Rec>({
      items: items(6),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out,
      process: async (x) => {
        processed.push(x.id);
        return x;
      },
    });
    expect(processed.sort()).toEqual(['k0', 'k2', 'k4', 'k5']);
    expect(r.resumed).toBe(2);
    expect(lines(out).map((x) => x.id)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
  });

  it('an aborted run keeps finished records and the next run completes them', async () => {
    const out = join(dir, 'o.jsonl');
    const ac = new AbortController();
    let n = 0;
    const first = await runStreamJob<Rec, Rec>({
      items: items(30),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out,
      concurrency: 3,
      signal: ac.signal,
      process: async (x) => {
        if (++n === 10) ac.abort();
        return x;
      },
    });
    expect(first.finalized).toBe(false);
    const partial = lines(out);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(30);
    const second = await runStreamJob<Rec, Rec>({
      items: items(30),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out,
      process: async (x) => x,
    });
    expect(second.resumed).toBe(partial.length);
    const ids = lines(out).map((x) => x.id);
    expect(ids).toEqual([...Array(30).keys()].map((i) => `k${i}`));
  });

  it('items left pending are not written; a duplicate input key is an error', async () => {
    const out = join(dir, 'o.jsonl');
    const r = await runStreamJob<Rec, Rec>({
      items: items(10),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out,
      process: async (x) => (x.v % 2 ? undefined : x),
    });
    expect(r).toMatchObject({ done: 5, pending: 5 });
    expect(lines(out).map((x) => x.v)).toEqual([0, 2, 4, 6, 8]);
    await expect(
      runStreamJob<Rec, Rec>({
        items: [
          { id: 'a', v: 1 },
          { id: 'a', v: 2 },
        ],
        keyOf: (x) => x.id,
        keyOfOutput: (x) => x.id,
        out: join(dir, 'dup.jsonl'),
        process: async (x) => x,
      }),
    ).rejects.toThrow(/duplicate item key "a"/);
  });

  it('shards split the keys with no overlap and no gap', async () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '1/0', 'x', '1/2/3']) expect(() => parseShard(bad)).toThrow(/--shard/);
    const all = new Set<string>();
    for (let k = 1; k <= 3; k++) {
      const out = join(dir, `s${k}.jsonl`);
      await runStreamJob<Rec, Rec>({
        items: items(300),
        keyOf: (x) => x.id,
        keyOfOutput: (x) => x.id,
        out,
        shard: { index: k, count: 3 },
        process: async (x) => x,
      });
      const got = lines(out).map((x) => x.id);
      expect(got.length).toBeGreaterThan(60);
      for (const id of got) {
        expect(all.has(id)).toBe(false);
        expect(inShard(id, { index: k, count: 3 })).toBe(true);
        all.add(id);
      }
    }
    expect(all.size).toBe(300);
  });
});

describe('OrderedOutput', () => {
  it('refuses nothing silently: check sees existing records, get reads one back from disk', () => {
    const f = join(dir, 'o.jsonl');
    writeFileSync(f, '{"id":"a","v":1}\n');
    expect(
      () =>
        new OrderedOutput<Rec>(f, (r) => r.id, {
          check: () => {
            throw new Error('nope');
          },
        }),
    ).toThrow('nope');
    const o = new OrderedOutput<Rec>(f, (r) => r.id);
    o.append({ id: 'b', v: 2 }, 0);
    expect(o.get('b')).toEqual({ id: 'b', v: 2 });
    expect(() => o.append({ id: 'b', v: 3 }, 1)).toThrow(/written twice/);
    o.close();
    appendFileSync(f, '');
  });
});

describe('runStreamJob and the event loop', () => {
  it('work settling in microtasks only still lets timers (and so signal handlers) run', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    // Bounded, so that a job that starves the loop ends (with no tick) instead of hanging.
    function* endless() {
      for (let i = 0; i < 200_000; i++) yield { id: `k${i}`, v: i };
    }
    const r = await runStreamJob<Rec, Rec>({
      items: endless(),
      keyOf: (x) => x.id,
      keyOfOutput: (x) => x.id,
      out: join(dir, 'loop.jsonl'),
      checkUniqueKeys: false,
      signal: ac.signal,
      process: async (x) => x,
    });
    clearInterval(timer);
    expect(r.finalized).toBe(false);
    expect(ticks).toBeGreaterThan(0);
  });
});
