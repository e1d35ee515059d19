import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { inShard } from '../../src/jobs/run-job.js';
import { BIN, type CliRun, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 27, item 4: `merge` of 2 of 3 label shards over a samples file said "missing 4" (input
 * rows with no record at all) when 401 of 1,200 solutions were absent, and exited 0. Now it
 * counts the solutions exactly and exits 1, or writes the merge with --allow-missing.
 */

let dir: string;
const cli = (args: string[]): Promise<CliRun> => startCli(args, join(dir, 'home')).done;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-merge-missing-');
});

describe('merge counts what is missing exactly', () => {
  it('2 of 3 shards of label over sample output: exact missing solutions, exit 1; --allow-missing writes them', async () => {
    const samples = join(dir, 'samples.jsonl');
    const common = ['--dataset', 'sim', '--count', '12'];
    expect((await cli(['sample', ...common, '--policy', 'sim', '--n', '4', '--out', samples])).code).toBe(0);
    const parts: string[] = [];
    for (const k of [1, 2]) {
      const out = join(dir, `labels-${k}.jsonl`);
      const r = await cli([
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
        '--shard',
        `${k}/3`,
        '--out',
        out,
      ]);
      expect(r.code, r.stderr).toBe(0);
      parts.push(out);
    }
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
