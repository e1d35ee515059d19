import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

function lines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

describe('Ctrl-C: runs recorded as interrupted; bench search keeps each finished point and resumes', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-interrupt-');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGINT midway: the message is true, the run is interrupted, the rerun resumes the finished points', async () => {
    const home = join(dir, 'home');
    const out = join(dir, 'bench.json');
    const points = join(dir, 'bench.points.jsonl');
    const args = [
      'bench',
      'search',
      '--dataset',
      'sim',
      '--count',
      '30',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--out',
      out,
    ];
    const run = startCli(args, home);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !(existsSync(points) && lines(points).length >= 2))
      await new Promise((r) => setTimeout(r, 20));
    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code).toBe(130);
    const kept = lines(points);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThan(17);
    for (const p of kept) expect((p.job as { command: string }).command).toBe('bench search');
    expect(stopped.stderr).toMatch(/recorded as interrupted/);
    expect(stopped.stderr).toContain(`finished work is kept in ${out}`);
    expect(existsSync(out)).toBe(false);

    const runs = await startCli(['runs', '--json', '--status', 'interrupted'], home).done;
    const interrupted = runs.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { command: string; status: string });
    expect(interrupted.map((r) => r.command)).toEqual(['bench search']);

    const again = await startCli([...args, '--json'], home).done;
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as { points: Array<Record<string, unknown>> };
    expect(report.points).toHaveLength(17);
    // The finished points were taken as they were, not computed again (the report adds each
    // point's paired difference against plain sampling, which is not stored in the points file;
    // the file's lines say simulated, which the report says once).
    for (const p of kept) {
      expect(p.simulated).toBe(true);
      const { job: _job, madeFrom: _madeFrom, simulated: _simulated, ...point } = p;
      expect(report.points).toContainEqual(expect.objectContaining(point));
    }
    expect(lines(points)).toHaveLength(17);
  }, 240_000);
});
