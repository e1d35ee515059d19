import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactSecrets, redactUrl } from '../../src/core/redact.js';
import { jobSettings } from '../../src/jobs/settings.js';
import { startWebServer } from '../../src/server/app.js';
import { openStore } from '../../src/store/db.js';
import { BIN, type CliRun, startCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { type SimServeCli, startSimServeCli } from '../support/sim-serve.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 27, item 8: `--api-key` and credentials in `--base-url` are stored nowhere — not in the
 * run store, the settings, the output rows, stderr, `stepwise runs --json` or the web API — and
 * the settings hash does not depend on them.
 */

const KEYS = ['sk-first-SECRET-4242', 'sk-second-SECRET-7373'];
const PASSWORD = 'hunter2-url-pass';

let dir: string;
let home: string;
let sim: SimServeCli;
const runs: CliRun[] = [];

const withCredentials = (url: string) => url.replace('http://', `http://alice:${PASSWORD}@`);

/** Every file under `root`, as text (binary store pages included: a key is plain bytes there). */
function allText(root: string): string {
  let text = '';
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true }))
    if (e.isFile()) text += readFileSync(join(e.parentPath, e.name)).toString('latin1');
  return text;
}

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-secrets-');
  home = join(dir, 'home');
  sim = await startSimServeCli(join(dir, 'sim-home'));
  for (const [i, key] of KEYS.entries())
    runs.push(
      await startCli(
        [
          'sample',
          '--dataset',
          'sim',
          '--count',
          '3',
          '--policy',
          'openai:sim',
          '--n',
          '2',
          '--base-url',
          withCredentials(sim.baseURL),
          '--api-key',
          key,
          '--out',
          join(dir, 'out', `samples-${i}.jsonl`),
          '--json',
        ],
        home,
      ).done,
    );
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

describe('no secret is written anywhere', () => {
  it('two runs differing only in the key: same settings hash, no key or URL password in store, outputs, stdout, stderr', () => {
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const [a, b] = runs.map((r) => JSON.parse(r.stdout) as { settingsHash: string });
    expect(a.settingsHash).toBe(b.settingsHash);
    const everything = allText(dir) + runs.map((r) => r.stdout + r.stderr).join('');
    for (const secret of [...KEYS, PASSWORD]) expect(everything).not.toContain(secret);
    // The summary names the requests' failures in words, never the object.
    expect(runs[0].stderr).toMatch(/requests +\d+ calls, \d+ retries, 0 failures/);
    expect(runs[0].stderr).not.toContain('[object Object]');
  });

  it('`stepwise runs --json` and the web API serve the runs without secrets, also runs recorded before redaction', async () => {
    // A run recorded by an older stepwise, key in plain text.
    const db = openStore(join(home, 'store.sqlite'));
    db.prepare(
      "INSERT INTO runs (id, command, config, status, started_at, counts, output) VALUES ('old-run', 'sample', ?, 'done', '2026-01-01T00:00:00Z', '{}', NULL)",
    ).run(JSON.stringify({ apiKey: KEYS[0], baseUrl: withCredentials(sim.baseURL), n: 2 }));
    db.close();
    const listed = await startCli(['runs', '--json', '--limit', '10'], home).done;
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('old-run');
    expect(listed.stdout).toContain('[redacted]');
    for (const secret of [...KEYS, PASSWORD]) expect(listed.stdout + listed.stderr).not.toContain(secret);

    const web = await startWebServer({ roots: [join(dir, 'out')], storePath: join(home, 'store.sqlite') });
    try {
      let served = '';
      const list = await (await fetch(`${web.url}/api/runs?scope=all`)).text();
      served += list;
      for (const r of (JSON.parse(list) as { runs: Array<{ id: string }> }).runs)
        served += await (await fetch(`${web.url}/api/runs/${encodeURIComponent(r.id)}`)).text();
      expect(served).toContain('old-run');
      for (const secret of [...KEYS, PASSWORD]) expect(served).not.toContain(secret);
    } finally {
      await web.close();
    }
  });

  it('an unreachable server with credentials in its URL: the error names the server, not the password', async () => {
    const port = await freePort();
    const r = await startCli(
      [
        'sample',
        '--dataset',
        'sim',
        '--count',
        '1',
        '--policy',
        'openai:sim',
        '--n',
        '1',
        '--base-url',
        `http://bob:${PASSWORD}@127.0.0.1:${port}/v1`,
        '--api-key',
        KEYS[1],
        '--max-retries',
        '0',
        '--out',
        join(dir, 'unreachable.jsonl'),
      ],
      home,
    ).done;
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`127.0.0.1:${port}`);
    for (const secret of [...KEYS, PASSWORD]) expect(r.stderr).not.toContain(secret);
  }, 60_000);

  it('redaction keeps values without secrets as they are (settings hashes unchanged)', () => {
    const plain = { policy: 'openai:qwen', seed: 3, note: 'x=1&y=2', url: 'http://127.0.0.1:8000/v1' };
    expect(redactSecrets(plain)).toEqual(plain);
    expect(jobSettings('sample', plain).hash).toBe(jobSettings('sample', { ...plain }).hash);
    expect(jobSettings('sample', { ...plain, apiKey: KEYS[0] }).hash).toBe(
      jobSettings('sample', { ...plain, apiKey: KEYS[1] }).hash,
    );
    expect(redactUrl('http://u:p@h:1/v1?api_key=abc&model=m')).toBe(
      'http://[redacted]@h:1/v1?api_key=[redacted]&model=m',
    );
  });
});
