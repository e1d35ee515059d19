import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { servedRoots } from '../../src/cli/commands/serve-web.js';
import { StepwiseError } from '../../src/core/errors.js';
import { jobSettings, withSettings } from '../../src/jobs/settings.js';
import { openStore } from '../../src/store/db.js';
import { finishRun, startRun } from '../../src/store/runs.js';
import { tempDir } from '../support/temp.js';

/**
 * `stepwise serve` without --dir serves the current folder only when stepwise wrote outputs
 * there. Files shaped like what stepwise reads (problem sets, ProcessBench sets) are data a
 * stranger's folder holds too — a Mac home's Library/ has JSON of every shape — and do not count.
 */
const base = tempDir('stepwise-served-');

const problem = { id: 'p1', question: 'What is 2+2?', answer: '4' };
const pbRow = { id: 'gsm8k-0', generator: 'm', problem: 'What is 2+2?', steps: ['a', 'b'], label: 1 };
const report = { judge: 'j', average_f1: 50, samples: 2, subsets: { gsm8k: { n: 2, f1: 50 } } };

function folder(name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
const refusal = (dir: string, store = join(base, 'no-store.sqlite')): StepwiseError => {
  try {
    servedRoots(undefined, dir, store);
  } catch (e) {
    return e as StepwiseError;
  }
  throw new Error(`${dir} was served`);
};

describe('serve without --dir: only folders with files stepwise wrote', () => {
  it('a folder of data-set-like JSON (problems, ProcessBench sets) is refused, exit 2', () => {
    const dir = folder('library', {
      'Library/Application Support/app/problems.jsonl': `${JSON.stringify(problem)}\n`,
      'Library/Caches/processbench.json': JSON.stringify([pbRow, pbRow]),
      'Library/Caches/set.jsonl': `${JSON.stringify(pbRow)}\n`,
    });
    const e = refusal(dir);
    expect(e).toBeInstanceOf(StepwiseError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/found 3 JSON\/JSONL files .*none of them written by stepwise/);
    expect(e.message).toMatch(/--dir/);
  });

  it('a job output (rows with their settings record) or the demo report makes the folder served', () => {
    const settings = jobSettings('sample', { policy: 'sim', n: 2 });
    const sampled = folder('sampled', {
      'problems.jsonl': `${JSON.stringify(problem)}\n`,
      'runs/s.jsonl': `${JSON.stringify(withSettings({ id: 'p1', samples: [] }, settings))}\n`,
    });
    expect(servedRoots(undefined, sampled, join(base, 'no-store.sqlite'))).toEqual([sampled]);
    const demo = folder('demo', { 'report.json': JSON.stringify({ kind: 'stepwise-demo', demo: true }) });
    expect(servedRoots(undefined, demo, join(base, 'no-store.sqlite'))).toEqual([demo]);
    // A settings record that is not one (no hash) does not count.
    const fake = folder('fake', {
      'x.jsonl': `${JSON.stringify({ id: 'a', job: { command: 'sample' } })}\n`,
    });
    expect(refusal(fake).exitCode).toBe(2);
  });

  it('a report without a settings record counts when a run recorded in the store wrote it', () => {
    const dir = folder('reports', { 'pb/report.json': JSON.stringify(report) });
    const storePath = join(base, 'store.sqlite');
    const db = openStore(storePath);
    // Another folder's run does not vouch for this one.
    finishRun(db, startRun(db, 'eval processbench', {}, join(base, 'elsewhere', 'report.json')), 'done');
    expect(refusal(dir, storePath).exitCode).toBe(2);
    finishRun(db, startRun(db, 'eval processbench', {}, join(dir, 'pb', 'report.json')), 'done');
    expect(servedRoots(undefined, dir, storePath)).toEqual([dir]);
  });

  it('stepwise serve in such a folder exits 2 and says why', () => {
    const dir = folder('cli-library', {
      'Library/problems.jsonl': `${JSON.stringify(problem)}\n`,
      'Library/pb.json': JSON.stringify([pbRow]),
    });
    const home = join(base, 'cli-home');
    const run = spawnSync(
      process.execPath,
      [new URL('../../bin/stepwise.js', import.meta.url).pathname, 'serve', '--port', '0'],
      { cwd: dir, env: { ...process.env, STEPWISE_HOME: home }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/holds no stepwise outputs: found 2 JSON\/JSONL files/);
    expect(run.stderr).toMatch(/none of them written by stepwise/);
  });
});
