import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../support/shared-data.js';

/**
 * Issue 17 for `label-code`: `--shard K/N` parts (rows and parts files) merge into what one
 * unsharded run writes, and a part resumed as another is refused.
 */

const root = new URL('../..', import.meta.url).pathname;
let dir: string;
beforeAll(() => {
  if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build`');
  dir = mkdtempSync(join(tmpdir(), 'stepwise-label-code-shard-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function stepwise(args: string[]) {
  return spawnSync(process.execPath, [join(root, 'bin/stepwise.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, STEPWISE_HOME: join(dir, 'home'), STEPWISE_QUIET: '1' },
  });
}
const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; problemId: string; labels: boolean[]; job?: unknown });

describe('label-code --shard K/N', () => {
  it('three parts merged hold the rows of one unsharded run; a part resumed as another is refused', {
    timeout: 300_000,
  }, () => {
    const args = [
      'label-code',
      '--dataset',
      'mbpp',
      '--path',
      sharedData('mbpp/mbpp.jsonl'),
      '--limit',
      '9',
      '--mutants-per-problem',
      '1',
      '--seed',
      '3',
    ];
    const full = stepwise([...args, '--out', join(dir, 'full.jsonl')]);
    expect(full.status, full.stderr).toBe(0);
    const outs: string[] = [];
    const parts: string[] = [];
    let problems = 0;
    for (let k = 1; k <= 3; k++) {
      const out = join(dir, `part${k}.jsonl`);
      const r = stepwise([...args, '--shard', `${k}/3`, '--out', out, '--json']);
      expect(r.status, r.stderr).toBe(0);
      const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
      expect(summary.shard).toBe(`${k}/3`);
      expect(summary.problems).toBeLessThan(9);
      problems += summary.problems;
      outs.push(out);
      parts.push(`${out}.parts.jsonl`);
    }
    expect(problems).toBe(9);
    const merged = join(dir, 'merged.jsonl');
    const m = stepwise(['merge', ...outs, '--out', merged]);
    expect(m.status, m.stderr).toBe(0);
    const byId = (rows: ReturnType<typeof lines>) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(lines(merged))).toEqual(byId(lines(join(dir, 'full.jsonl'))));
    // The parts files (one line per problem) merge on problemId too.
    const mergedParts = join(dir, 'merged.parts.jsonl');
    const mp = stepwise(['merge', ...parts, '--key', 'problemId', '--out', mergedParts, '--json']);
    expect(JSON.parse(mp.stdout)).toMatchObject({ records: 9, duplicates: 0 });
    const wrong = stepwise([...args, '--shard', '2/3', '--out', outs[0]]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/not in --shard 2\/3/);
  });
});
