import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mergeJsonl } from '../../src/jobs/merge.js';
import { inShard } from '../../src/jobs/run-job.js';
import { BIN, type CliRun, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 27, item 4: `merge` of 2 of 3 label shards over a samples file said "missing 4" (input
 * rows with no record at all) when 401 of 1,200 solutions were absent, and exited 0. Now it
 * counts the solutions exactly and exits 1, or writes the merge with --allow-missing. Without
 * --input it said nothing at all: now rows written with --shard K/N record their part
 * (`job.shard`) and merge names the part no file holds.
 */

let dir: string;
const cli = (args: string[]): Promise<CliRun> => startCli(args, join(dir, 'home')).done;

/** Both describes merge label shards 1/3 and 2/3 of one sample run: made once, here. */
let samples: string;
let label: string[];
let parts: string[];

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-merge-missing-');
  samples = join(dir, 'samples.jsonl');
  const common = ['--dataset', 'sim', '--count', '12'];
  const sampled = await cli(['sample', ...common, '--policy', 'sim', '--n', '4', '--out', samples]);
  expect(sampled.code, sampled.stderr).toBe(0);
  label = [
    'label',
    '--input',
    samples,
    ...common,
    '--policy',
    'sim',
    '--rollouts',
    '1',
    '--signals',
    'abs-q',
  ];
  parts = [];
  for (const k of [1, 2]) {
    const out = join(dir, `part-${k}.jsonl`);
    const r = await cli([...label, '--shard', `${k}/3`, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    parts.push(out);
  }
}, 180_000);

describe('merge counts what is missing exactly', () => {
  it('2 of 3 shards of label over sample output: exact missing solutions, exit 1; --allow-missing writes them', async () => {
    // The solutions of part 3: what the merge must say is missing.
    const ids = readFileSync(samples, 'utf8')
      .trim()
      .split('\n')
      .flatMap((l) => {
        const r = JSON.parse(l) as { id: string; samples: unknown[] };
        return r.samples.map((_, k) => `${r.id}#${k}`);
      });
    expect(ids).toHaveLength(48);
    const absent = ids.filter((id) => inShard(id, { index: 3, count: 3 }));
    expect(absent.length).toBeGreaterThan(4);
    const rowsHit = new Set(absent.map((id) => id.replace(/#\d+$/, ''))).size;

    const merged = join(dir, 'merged.jsonl');
    const refused = await cli(['merge', ...parts, '--input', samples, '--out', merged, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${absent.length} of 48 solutions`);
    expect(refused.stderr).toContain(`${rowsHit} input rows affected`);
    expect(existsSync(merged)).toBe(false);

    const allowed = await cli([
      'merge',
      ...parts,
      '--input',
      samples,
      '--out',
      merged,
      '--json',
      '--allow-missing',
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({
      records: 48 - absent.length,
      missing: absent.length,
      expected: 48,
      missingUnit: 'solutions',
      missingInputRows: rowsHit,
    });
    expect(readFileSync(merged, 'utf8').trim().split('\n')).toHaveLength(48 - absent.length);
  }, 180_000);
});

describe('merge without --input checks the shards the rows record', () => {
  it('2 of 3 label shards: exit 1 naming shard 3/3; all 3: the unsharded rows, job.shard dropped', async () => {
    const full = join(dir, 'full.jsonl');
    expect((await cli([...label, '--out', full])).code).toBe(0);
    const last = join(dir, 'part-3.jsonl');
    const third = await cli([...label, '--shard', '3/3', '--out', last]);
    expect(third.code, third.stderr).toBe(0);
    const all = [...parts, last];
    const lines = (f: string) => readFileSync(f, 'utf8').trim().split('\n');
    const fullLines = lines(full);
    const hash = (JSON.parse(fullLines[0]) as { job: { hash: string } }).job.hash;
    // Each part's rows record it, outside the settings and their hash; unsharded rows record none.
    expect(JSON.parse(lines(all[2])[0]).job).toMatchObject({ hash, shard: { index: 3, count: 3 } });
    expect(JSON.parse(fullLines[0]).job.shard).toBeUndefined();

    const merged = join(dir, 'merged-shards.jsonl');
    const refused = await cli(['merge', parts[0], parts[1], '--out', merged]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`shard 3/3 of label (hash ${hash}) is missing`);
    expect(existsSync(merged)).toBe(false);

    const partial = await cli(['merge', parts[0], parts[1], '--out', merged, '--allow-missing', '--json']);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stderr).toContain('shard 3/3 of label');
    expect(JSON.parse(partial.stdout).missingShards).toEqual([
      { command: 'label', hash, index: 3, count: 3 },
    ]);
    // A partial merge keeps its rows' parts, so merging it with the last part is checked too.
    expect(JSON.parse(lines(merged)[0]).job.shard).toBeDefined();
    const rest = join(dir, 'merged-rest.jsonl');
    const completed = await cli(['merge', merged, all[2], '--out', rest]);
    expect(completed.code, completed.stderr).toBe(0);
    expect([...lines(rest)].sort()).toEqual([...fullLines].sort());

    // All three: exit 0, no note, and the rows of the unsharded run byte for byte (file order).
    const whole = await cli(['merge', ...all, '--out', merged]);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stderr).toContain('shards      every part of the job given');
    expect(whole.stderr).not.toMatch(/ is missing|^note:/m);
    expect([...lines(merged)].sort()).toEqual([...fullLines].sort());
    const ordered = await cli(['merge', ...all, '--input', samples, '--out', merged]);
    expect(ordered.code, ordered.stderr).toBe(0);
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(full, 'utf8'));

    // Rows that record no shard cannot be checked without --input: merged as before, with a note.
    const unchecked = await cli(['merge', full, '--out', join(dir, 'copy.jsonl')]);
    expect(unchecked.code, unchecked.stderr).toBe(0);
    expect(unchecked.stderr).toContain(`note: ${full} records no shard`);
  }, 180_000);

  it('refuses a malformed job.shard naming file, line and field; a row of two runs differs in its shard only', () => {
    const job = (shard: unknown) => ({
      command: 'label',
      hash: 'h',
      settings: {},
      ...(shard ? { shard } : {}),
    });
    const a = join(dir, 'shard-a.jsonl');
    const b = join(dir, 'shard-b.jsonl');
    const out = join(dir, 'shard-m.jsonl');
    writeFileSync(a, `${JSON.stringify({ id: 'x', job: job({ index: 1, count: 1 }) })}\n`);
    writeFileSync(b, `${JSON.stringify({ id: 'x', job: job({ index: 2, count: 2 }) })}\n`);
    const s = mergeJsonl({ files: [a, b], out });
    expect(s).toMatchObject({ records: 1, duplicates: 1, conflicts: 0, missingShards: [], shardedJobs: 1 });
    expect(readFileSync(out, 'utf8')).toBe(`${JSON.stringify({ id: 'x', job: job(undefined) })}\n`);
    writeFileSync(b, `{"id":"y"}\n${JSON.stringify({ id: 'x', job: job({ index: 3, count: 2 }) })}\n`);
    expect(() => mergeJsonl({ files: [a, b], out })).toThrow(/shard-b\.jsonl, line 2.*job\.shard/);
  });
});
