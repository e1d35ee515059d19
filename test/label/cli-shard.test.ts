import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeJsonl } from '../../src/jobs/merge.js';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 17, acceptance 2: `label --shard 1/3`, `2/3`, `3/3` on 60 solutions, then
 * `stepwise merge S1 S2 S3 --out M`: the same ids, first errors and chunk labels as one
 * unsharded run.
 */

let dir: string;
beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing');
  dir = tempDir('stepwise-shard-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Labeled {
  id: string;
  firstError: Record<string, number>;
  chunks: Array<{ labels: Record<string, unknown> }>;
}
const read = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Labeled);

async function cli(args: string[]) {
  const r = await startCli(args, join(dir, 'home')).done;
  if (r.code !== 0) throw new Error(`stepwise ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

describe('label --shard K/N + merge', () => {
  it('three shards merged equal one unsharded run (ids, first errors, chunk labels)', async () => {
    const input = join(dir, 'in.jsonl');
    await cli(['sim', 'dataset', '--processbench', '--count', '60', '--seed', '5', '--out', input]);
    const common = ['--input', input, '--policy', 'sim', '--rollouts', '4', '--signals', 'abs-q,rel-ratio'];
    await cli(['label', ...common, '--out', join(dir, 'full.jsonl')]);
    const shards: string[] = [];
    for (let k = 1; k <= 3; k++) {
      const s = join(dir, `s${k}.jsonl`);
      await cli(['label', ...common, '--shard', `${k}/3`, '--out', s]);
      shards.push(s);
    }
    const sizes = shards.map((s) => read(s).length);
    expect(sizes.every((n) => n > 5 && n < 40)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(60);
    const merged = join(dir, 'merged.jsonl');
    const m = await cli(['merge', ...shards, '--out', merged, '--json']);
    expect(JSON.parse(m.stdout)).toMatchObject({ records: 60, duplicates: 0, conflicts: 0 });
    const full = read(join(dir, 'full.jsonl'));
    const got = read(merged);
    const byId = new Map(got.map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual(full.map((r) => r.id).sort());
    for (const r of full) {
      expect(byId.get(r.id)!.firstError).toEqual(r.firstError);
      expect(byId.get(r.id)!.chunks.map((c) => c.labels)).toEqual(r.chunks.map((c) => c.labels));
    }
    // With the input, the merged file is the unsharded file, line for line.
    await cli(['merge', ...shards, '--input', input, '--out', merged]);
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(join(dir, 'full.jsonl'), 'utf8'));
    // Every command checkpointed its WAL at exit, and `stepwise runs` shows the store's size.
    const store = join(dir, 'home', 'store.sqlite');
    expect(existsSync(`${store}-wal`) ? statSync(`${store}-wal`).size : 0).toBe(0);
    const runs = await cli(['runs']);
    expect(runs.stdout).toMatch(/^store .*store\.sqlite: \d+\.\d MB \(model-call cache and runs\)$/m);
    // Resuming a shard's output as another shard is refused.
    const wrong = await startCli(
      ['label', ...common, '--shard', '2/3', '--out', shards[0]],
      join(dir, 'home'),
    ).done;
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/not in --shard 2\/3/);
  }, 300_000);
});

describe('mergeJsonl', () => {
  it('keeps each key once, counts conflicts, missing and foreign keys, orders samples after their row', () => {
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    const input = join(dir, 'input.jsonl');
    writeFileSync(a, '{"id":"p2#1","v":1}\n{"id":"x","v":0}\n{"id":"p1","v":1}\n');
    writeFileSync(
      b,
      '{"id":"p2#0","v":1}\n{"id":"p1","v":2}\n{"id":"x","v":0}\n{"id":"p2#10","v":1}\n{"id":"torn"',
    );
    writeFileSync(input, '{"id":"p1"}\n{"id":"p3"}\n{"id":"p2","samples":[]}\n');
    const out = join(dir, 'm.jsonl');
    const s = mergeJsonl({ files: [a, b], out, input, allowMissing: true });
    expect(s).toMatchObject({ records: 5, duplicates: 2, conflicts: 1, missing: 1, notInInput: 1 });
    expect(read(out).map((r) => r.id)).toEqual(['p1', 'p2#0', 'p2#1', 'p2#10', 'x']);
    expect((read(out)[0] as unknown as { v: number }).v).toBe(1);
    writeFileSync(b, '{"id":"ok"}\nnot json\n{"id":"z"}\n');
    expect(() => mergeJsonl({ files: [b], out })).toThrow(/b\.jsonl, line 2: not valid JSON/);
  });

  it('keeps input order for ids shaped like sub-keys of other input ids (X and X/3 both in the input)', () => {
    const a = join(dir, 'ids.jsonl');
    const input = join(dir, 'ids-input.jsonl');
    writeFileSync(a, '{"id":"X/3"}\n{"id":"Y"}\n{"id":"X"}\n{"id":"Y@2"}\n');
    writeFileSync(input, '{"id":"X"}\n{"id":"Y"}\n{"id":"X/3"}\n');
    const out = join(dir, 'ids-merged.jsonl');
    const s = mergeJsonl({ files: [a], out, input });
    expect(s).toMatchObject({ records: 4, missing: 0, notInInput: 0 });
    expect(read(out).map((r) => r.id)).toEqual(['X', 'Y', 'Y@2', 'X/3']);
  });
});
