import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * Ctrl-C on `stepwise label-code`: the job harness records the run and exits 130, which skips the
 * job's `finally`; the rows' temporary file beside `--out` must go too (the parts file keeps the
 * finished problems). The signal is sent once a first problem is finished, with most of the 200
 * still to do, so the moment is not a matter of timing.
 */
describe('label-code interrupted with Ctrl-C', () => {
  let dir: string;
  let run: ReturnType<typeof startCli> | undefined;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-label-code-int-');
  });
  afterAll(() => {
    if (run?.child.exitCode === null && run.child.pid !== undefined) process.kill(run.child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 130 and leaves no output and no temporary file; the parts file keeps finished problems', async () => {
    const outDir = join(dir, 'out');
    const out = join(outDir, 'labels.jsonl');
    const parts = `${out}.parts.jsonl`;
    run = startCli(
      [
        'label-code',
        '--dataset',
        'mbpp',
        '--path',
        sharedData('mbpp/mbpp.jsonl'),
        '--limit',
        '200',
        '--mutants-per-problem',
        '1',
        '--seed',
        '3',
        '--out',
        out,
      ],
      join(dir, 'home'),
    );
    const tmpOf = () => (existsSync(outDir) ? readdirSync(outDir).filter((f) => f.includes('.tmp-')) : []);
    // Finished problems in the parts file (its first line may be the job's settings record).
    const finished = () =>
      existsSync(parts)
        ? readFileSync(parts, 'utf8')
            .split('\n')
            .filter((l) => l.includes('"problemId"')).length
        : 0;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && !(finished() > 0 && tmpOf().length > 0))
      await new Promise((r) => setTimeout(r, 100));
    expect(tmpOf()).toHaveLength(1);
    expect(finished()).toBeGreaterThan(0);

    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/`stepwise label-code`\) recorded as interrupted/);
    expect(tmpOf()).toEqual([]);
    expect(existsSync(out)).toBe(false);
    expect(finished()).toBeGreaterThan(0);
  }, 200_000);
});
