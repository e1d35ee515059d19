import { existsSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer } from '../../src/server/app.js';
import { openStore } from '../../src/store/db.js';
import { getRun, listRuns, processStartTime, startRun } from '../../src/store/runs.js';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * A job killed outright (SIGKILL: nothing runs in the process) cannot record that it stopped;
 * its run keeps the process it ran in, and whoever reads the runs on that host sees it gone.
 */
describe('a SIGKILLed job is not "running" forever', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-killed-');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGKILL midway: stepwise runs and the web view show the run interrupted, with the reason', async () => {
    const home = join(dir, 'home');
    const out = join(dir, 'search.jsonl');
    const run = startCli(
      [
        'search',
        '--dataset',
        'sim',
        '--count',
        '100000',
        '--strategy',
        'chunk-reset',
        '--policy',
        'sim',
        '--judge',
        'sim:generative',
        '--out',
        out,
      ],
      home,
    );
    const storePath = join(home, 'store.sqlite');
    const deadline = Date.now() + 60_000;
    let id: string | undefined;
    while (Date.now() < deadline && id === undefined) {
      await new Promise((r) => setTimeout(r, 100));
      if (!existsSync(storePath)) continue;
      id = listRuns(openStore(storePath), 5, { status: 'running' })[0]?.id;
    }
    expect(id, 'the search recorded a running run').toBeDefined();
    const db = openStore(storePath);
    // While the process lives, the run is running, with its process recorded.
    const live = getRun(db, id!)!;
    expect(live).toMatchObject({ status: 'running', pid: run.child.pid, host: hostname(), endReason: null });

    run.child.kill('SIGKILL');
    const stopped = await run.done;
    expect(stopped.signal).toBe('SIGKILL');

    const listed = await startCli(['runs', '--json'], home).done;
    expect(listed.code).toBe(0);
    const rows = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; status: string; endReason: string | null });
    const killed = rows.find((r) => r.id === id);
    expect(killed?.status).toBe('interrupted');
    expect(killed?.endReason).toContain(`pid ${run.child.pid}`);
    const table = await startCli(['runs'], home).done;
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+-\\s+search\\s+interrupted`));

    const server = await startWebServer({ roots: [dir], storePath });
    try {
      const api = (await (await fetch(`${server.url}/api/runs`)).json()) as {
        runs: Array<{ id: string; status: string; endReason: string | null }>;
      };
      expect(api.runs.find((r) => r.id === id)).toMatchObject({ status: 'interrupted' });
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a live process keeps its run running; a reused pid or a gone process does not; another host is left alone', () => {
    const db = openStore(join(dir, 'unit.sqlite'));
    const mine = startRun(db, 'label', {});
    expect(getRun(db, mine)!.status).toBe('running');
    // This process's pid, but another start time: a later process that got the pid of a dead one.
    const reused = startRun(db, 'label', {});
    db.prepare("UPDATE runs SET proc_start = 'other' WHERE id = ?").run(reused);
    // A pid no process has (above the kernel's pid_max).
    const gone = startRun(db, 'label', {});
    db.prepare('UPDATE runs SET pid = 99999999 WHERE id = ?').run(gone);
    const elsewhere = startRun(db, 'label', {});
    db.prepare("UPDATE runs SET pid = 99999999, host = 'another-host' WHERE id = ?").run(elsewhere);
    const byId = new Map(listRuns(db, 10).map((r) => [r.id, r]));
    expect(byId.get(mine)!.status).toBe('running');
    expect(byId.get(gone)!.status).toBe('interrupted');
    expect(byId.get(gone)!.endReason).toMatch(/ended without finishing/);
    expect(byId.get(elsewhere)!.status).toBe('running');
    if (processStartTime(process.pid) !== null) expect(byId.get(reused)!.status).toBe('interrupted');
    db.close();
  });
});
