import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { madeFromDigest } from '../../src/jobs/made-from.js';
import { runStreamJob } from '../../src/jobs/run-job.js';
import { tempDir } from '../support/temp.js';

interface Item {
  id: string;
  text: string;
}

const job = (out: string, items: Item[], processed: string[]) =>
  runStreamJob<Item, { id: string; upper: string }>({
    items,
    keyOf: (i) => i.id,
    keyOfOutput: (r) => r.id,
    out,
    concurrency: 1,
    process: async (i) => {
      processed.push(i.id);
      return { id: i.id, upper: i.text.toUpperCase() };
    },
  });

describe('runStreamJob resumes by content', () => {
  it('redoes a row whose input changed; after an interrupted redo the newer line of a key wins', async () => {
    const out = join(tempDir('stepwise-made-from-'), 'out.jsonl');
    const first: string[] = [];
    await job(
      out,
      [
        { id: 'a', text: 'x' },
        { id: 'b', text: 'y' },
      ],
      first,
    );
    expect(first).toEqual(['a', 'b']);
    const again: string[] = [];
    const r = await job(
      out,
      [
        { id: 'a', text: 'x' },
        { id: 'b', text: 'changed' },
      ],
      again,
    );
    expect(again).toEqual(['b']);
    expect(r).toMatchObject({ resumed: 1, redone: 1, unverified: 0 });
    const rows = readFileSync(out, 'utf8').trim().split('\n');
    expect(rows.map((l) => JSON.parse(l).upper)).toEqual(['X', 'CHANGED']);

    // A redo interrupted before finalize leaves the stale line first and the new one after it.
    const b = { id: 'b', text: 'changed' };
    const stale = JSON.stringify({ id: 'b', upper: 'Y', madeFrom: madeFromDigest({ id: 'b', text: 'y' }) });
    writeFileSync(out, `${rows[0]}\n${stale}\n${rows[1]}\n`);
    const after: string[] = [];
    const r2 = await job(out, [{ id: 'a', text: 'x' }, b], after);
    expect(after).toEqual([]);
    expect(r2).toMatchObject({ resumed: 2, redone: 0 });
    expect(readFileSync(out, 'utf8').trim().split('\n')).toEqual(rows);
  });
});
