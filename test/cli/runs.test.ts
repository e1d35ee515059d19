import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finishRun, openStore, startRun } from '../../src/store/index.js';
import { jsonLines, runCli } from '../data/run-cli.js';
import { tempDir } from '../support/temp.js';

describe('stepwise runs', () => {
  it('lists runs from the store, newest first, as a table or JSON lines', () => {
    const home = tempDir('stepwise-runs-');
    const db = openStore(join(home, 'store.sqlite'));
    const a = startRun(db, 'label', { m: 4 }, 'labels.jsonl');
    finishRun(db, a, 'done', { problems: 12 });
    const b = startRun(db, 'search', { n: 8 });
    db.close();

    const json = runCli(['runs', '--json'], { env: { STEPWISE_HOME: home } });
    expect(json.code).toBe(0);
    const rows = jsonLines(json.stdout);
    expect(rows.map((r) => r.id)).toEqual([b, a]);
    expect(rows[1]).toMatchObject({
      command: 'label',
      status: 'done',
      counts: { problems: 12 },
    });
    // Output paths are stored absolute (the web view opens them from any folder).
    expect(rows[1].output).toMatch(/^\/.*labels\.jsonl$/);

    const table = runCli(['runs', '--limit', '5'], { env: { STEPWISE_HOME: home } });
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+name\s+command\s+status\s+started\s+ended\s+counts$/);
    expect(table.stdout).toMatch(new RegExp(`${a}\\s+-\\s+label\\s+done\\s+.*problems=12`));
    const one = runCli(['runs', '--json', '--command', 'label'], { env: { STEPWISE_HOME: home } });
    expect(jsonLines(one.stdout).map((r) => r.id)).toEqual([a]);
    expect(runCli(['runs', '--limit', '0'], { env: { STEPWISE_HOME: home } }).code).toBe(2);
    // One run by its id: the run.json that `--config` replays.
    const byId = runCli(['runs', '--id', a, '--json'], { env: { STEPWISE_HOME: home } });
    expect(jsonLines(byId.stdout).map((r) => r.id)).toEqual([a]);
    const missing = runCli(['runs', '--id', 'nope', '--json'], { env: { STEPWISE_HOME: home } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no run nope in .*store\.sqlite/);
  });

  it('a job run with --name keeps the name with its run: runs lists it (table and JSON); a bad name is refused', () => {
    const home = tempDir('stepwise-runs-');
    const out = join(home, 'S.jsonl');
    const args = ['sample', '--dataset', 'sim', '--limit', '2', '--policy', 'sim', '--n', '1', '--out', out];
    const ran = runCli([...args, '--name', 'plain sampling, seed 0'], { env: { STEPWISE_HOME: home } });
    expect(ran.code, ran.stderr).toBe(0);
    const rows = jsonLines(runCli(['runs', '--json'], { env: { STEPWISE_HOME: home } }).stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ command: 'sample', name: 'plain sampling, seed 0' });
    const table = runCli(['runs'], { env: { STEPWISE_HOME: home } }).stdout;
    expect(table).toMatch(/plain sampling, seed 0\s+sample\s+done/);
    // The name is not a setting: the same output resumes under another name.
    expect(runCli([...args, '--name', 'again'], { env: { STEPWISE_HOME: home } }).code).toBe(0);
    const bad = runCli([...args, '--name', 'two\nlines'], { env: { STEPWISE_HOME: home } });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--name must be/);
  });

  it('an empty home says so and creates no store', () => {
    const home = tempDir('stepwise-runs-');
    const { code, stdout } = runCli(['runs'], { env: { STEPWISE_HOME: home } });
    expect(code).toBe(0);
    expect(stdout).toBe('no runs recorded yet\n');
    expect(runCli(['runs', '--json'], { env: { STEPWISE_HOME: home } }).stdout).toBe('');
  });
});
