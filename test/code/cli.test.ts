import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const root = new URL('../..', import.meta.url).pathname;

function stepwise(args: string[], home: string) {
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` before the CLI tests (npm test does)');
  return spawnSync(process.execPath, [join(root, 'bin/stepwise.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, STEPWISE_HOME: home, STEPWISE_QUIET: '1' },
  });
}

describe('stepwise label-code', () => {
  it('writes TRL stepwise rows, resumes, and feeds stepwise export', { timeout: 120_000 }, () => {
    const dir = tempDir('stepwise-label-code-');
    const out = join(dir, 'labels.jsonl');
    const args = ['label-code', '--dataset', 'mbpp', '--path', sharedData('mbpp/mbpp.jsonl'), '--limit', '4'];
    const first = stepwise(
      [...args, '--mutants-per-problem', '2', '--seed', '7', '--out', out, '--json'],
      dir,
    );
    expect(first.stderr).not.toMatch(/unexpected error/);
    expect(first.status).toBe(0);
    const summary = JSON.parse(first.stdout.trim().split('\n').pop() ?? '{}');
    expect(summary).toMatchObject({ problems: 4, equalLengths: true, signal: 'mutation', resumed: 0 });
    expect(summary.labeled).toBeGreaterThanOrEqual(3);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.length).toBe(summary.rows);
    for (const r of rows) {
      expect(typeof r.prompt).toBe('string');
      expect(r.completions.length).toBe(r.labels.length);
    }
    expect(rows.filter((r) => r.origin === 'reference')).toHaveLength(4);

    const again = stepwise(
      [...args, '--mutants-per-problem', '2', '--seed', '7', '--out', out, '--json'],
      dir,
    );
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout.trim().split('\n').pop() ?? '{}')).toMatchObject({
      resumed: 4,
      rows: summary.rows,
    });

    const trl = join(dir, 'trl.jsonl');
    const exported = stepwise(
      ['export', '--task', 'prm', '--format', 'trl', '--signal', 'mutation', '--from', out, '--out', trl],
      dir,
    );
    expect(exported.status).toBe(0);
    const trlRows = readFileSync(trl, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(trlRows).toHaveLength(rows.length);
    expect(trlRows[0].completions).toEqual(rows[0].completions);
    expect(trlRows[0].labels).toEqual(rows[0].labels);
  });

  it('says what is wrong with bad flags (exit 2, no stack trace)', () => {
    const dir = tempDir('stepwise-label-code-');
    const bad = stepwise(['label-code', '--dataset', 'gsm8k', '--out', join(dir, 'x.jsonl')], dir);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--dataset must be one of mbpp, humaneval/);
    expect(bad.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});
