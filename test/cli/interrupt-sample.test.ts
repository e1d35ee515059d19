import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, runsOf, runUntilStopped, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

const ids = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => (JSON.parse(l) as { id: string }).id)
    : [];

/**
 * `sample` stops by itself on Ctrl-C (the job harness hands it an abort signal: nothing new is
 * sent, every finished problem is kept): the run is recorded as interrupted with its counts, the
 * resume hint is printed whole, and a rerun takes the finished problems as they are.
 */
describe('Ctrl-C on sample: the harness records the run as interrupted; a rerun resumes', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-interrupt-sample-');
  });

  it('SIGINT midway: exit 130, the whole hint, run interrupted; the rerun resumes every kept problem', async () => {
    const home = join(dir, 'home');
    const out = join(dir, 'S.jsonl');
    const args = ['sample', '--dataset', 'sim', '--count', '20000', '--policy', 'sim', '--n', '8'];
    const deadline = Date.now() + 120_000;
    const stopped = await runUntilStopped(
      [...args, '--concurrency', '1', '--out', out],
      home,
      () => ids(out).length >= 3 || Date.now() > deadline,
      20,
    );
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/^stepwise: interrupted$/m);
    expect(stopped.stderr).toMatch(/^ {2}run \S+ \(`stepwise sample`\) recorded as interrupted$/m);
    expect(stopped.stderr).toContain(`  finished work is kept in ${out}\n`);
    expect(stopped.stderr).toContain('  rerun the same command to resume\n');
    const kept = ids(out);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(20_000);

    const interrupted = await runsOf(home, '--status', 'interrupted');
    expect(interrupted.map((r) => r.command)).toEqual(['sample']);
    expect(interrupted[0]?.counts?.total).toBe(20_000);

    // --limit is not a setting: the rerun is the same job over the first problems.
    const limit = kept.length + 2;
    const again = await startCli([...args, '--limit', String(limit), '--out', out, '--json'], home).done;
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { resumed: number; problems: number };
    expect(summary.problems).toBe(limit);
    expect(summary.resumed).toBe(kept.length);
    expect(ids(out).slice(0, kept.length)).toEqual(kept);
  }, 300_000);
});
