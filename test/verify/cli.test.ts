import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedEval } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const root = new URL('../..', import.meta.url).pathname;

function run(file: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  if (!existsSync(join(root, 'dist/index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before the CLI tests (npm test does)');
  }
  const home = tempDir('stepwise-home-');
  const r = spawnSync(process.execPath, [file, ...args], {
    cwd: root,
    encoding: 'utf8',
    env: {
      ...process.env,
      STEPWISE_HOME: home,
      STEPWISE_QUIET: '1',
    },
  });
  rmSync(home, { recursive: true, force: true });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const cli = (args: string[]) => run(join(root, 'bin/stepwise.js'), args);

describe('stepwise verify', () => {
  it('prints equal / not equal', () => {
    expect(cli(['verify', '\\frac{1}{2}', '0.5'])).toMatchObject({ code: 0, stdout: 'equal\n' });
    expect(cli(['verify', '3', '4'])).toMatchObject({ code: 0, stdout: 'not equal\n' });
  });

  it('--json carries method and normalised forms; options reach the checker', () => {
    const r = cli(['verify', '25\\%', '25', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ equal: true, gold: '25', pred: '25' });
    const strict = cli(['verify', '25\\%', '25', '--percent', 'strict', '--json']);
    expect(JSON.parse(strict.stdout).equal).toBe(false);
  });

  it('usage errors exit 2 with a message', () => {
    const r = cli(['verify', '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs <gold> and <pred>/);
  });

  it('--cases scores a case file and names a bad line', () => {
    const dir = tempDir('verify-cases-');
    const good = join(dir, 'cases.jsonl');
    writeFileSync(
      good,
      [
        { gold: '1/2', pred: '0.5', equal: true },
        { gold: '3', pred: '4', equal: false },
        { gold: '3', pred: 'The answer is $\\boxed{3}$', equal: true, kind: 'extract' },
        { gold: '7', pred: '7', equal: false },
      ]
        .map((c) => JSON.stringify(c))
        .join('\n'),
    );
    const r = cli(['verify', '--cases', good, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 4, agree: 3, falsePositives: 1, falseNegatives: 0 });
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(
      bad,
      '{"gold": "1", "pred": "1", "equal": true}\n{"gold": 1, "pred": "1", "equal": true}\n',
    );
    const e = cli(['verify', '--cases', bad]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/bad\.jsonl, line 2, field "gold"/);
  });

  it('the peer runner on the package entry: 453 agree of 453', () => {
    const r = run(sharedEval('answer-equiv/run_equiv_cases.mjs'), [join(root, 'dist/index.js')]);
    expect(r.code).toBe(0);
    const last = r.stdout.trim().split('\n').pop() ?? '';
    const m = /^(\d+) agree of 453$/.exec(last);
    expect(m, last).not.toBeNull();
    expect(Number(m![1])).toBe(453);
    const byLabel = /equal=false (\d+)\/108 agree/.exec(r.stdout);
    expect(byLabel).not.toBeNull();
    expect(Number(byLabel![1])).toBe(108);
  });
});
