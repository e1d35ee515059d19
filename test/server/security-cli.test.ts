import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderPolicyPrompt } from '../../src/prompts/index.js';
import { generateSimProblems } from '../../src/sim/index.js';
import { startCli } from '../support/cli.js';
import { rawRequest } from '../support/raw-http.js';
import { tempDir } from '../support/temp.js';

/**
 * The attacks against the three real server commands, as a user starts them: a
 * DNS-rebinding Host, secrets in a served folder, unbounded or text/plain requests to the sim
 * server, and the token kept out of `ps`.
 */

const home = tempDir('stepwise-sec-cli-');
const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGTERM');
  rmSync(home, { recursive: true, force: true });
});

/** A port free right now (P in the issue). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Start a server command and wait until it prints `ready` (stdout or stderr). */
async function serve(args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<ChildProcess> {
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  const { child, done } = startCli(args, home);
  for (const [k, v] of saved) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  running.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const look = (d: Buffer) => {
      out += String(d);
      if (ready.test(out)) resolve();
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    done.then((r) => reject(new Error(`stepwise ${args.join(' ')} exited ${r.code}: ${r.stderr}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const evil = (port: number) => ({ host: `evil.example:${port}` });
const json = { 'content-type': 'application/json' };

describe('server commands against the issue #19 attacks', () => {
  it('stepwise serve: evil Host gets 403 on /api/runs, the real host 200; hidden, non-JSON and .env files 404 like a missing file', async () => {
    const d = join(home, 'served');
    mkdirSync(join(d, '.docker'), { recursive: true });
    writeFileSync(join(d, '.docker', 'config.json'), '{"auths": {"ghcr.io": {"auth": "dXNlcjpzZWNyZXQ="}}}');
    writeFileSync(join(d, 'creds.txt'), '{"client_secret": "s3cr3t"}');
    writeFileSync(join(d, 'notes.env'), 'OPENAI_API_KEY=sk-secret');
    const p = await freePort();
    const child = await serve(['serve', '--dir', d, '--port', String(p)], /web view on/);
    try {
      const base = `http://127.0.0.1:${p}`;
      expect((await rawRequest(`${base}/api/runs`, { headers: evil(p) })).status).toBe(403);
      expect((await rawRequest(`${base}/api/runs`)).status).toBe(200);
      const missing = await rawRequest(`${base}/api/file?root=0&path=does-not-exist.json`);
      expect(missing.status).toBe(404);
      for (const path of ['.docker/config.json', 'creds.txt', 'notes.env']) {
        const r = await rawRequest(`${base}/api/file?root=0&path=${encodeURIComponent(path)}`);
        expect(r.status, path).toBe(404);
        expect(r.body, path).toBe(missing.body);
        expect(r.body, path).not.toMatch(/secret|auths|dXNlcj/);
      }
    } finally {
      await stop(child);
    }
  });

  it('stepwise serve rewards: evil Host gets 403 on POST /get_reward with a valid JSON body, the real host 200', async () => {
    const p = await freePort();
    const child = await serve(['serve', 'rewards', '--kind', 'outcome', '--port', String(p)], /listening on/);
    try {
      const body = JSON.stringify({ query: ['so \\boxed{12}'], prompts: [''], labels: ['12'] });
      const url = `http://127.0.0.1:${p}/get_reward`;
      expect((await rawRequest(url, { method: 'POST', headers: { ...json, ...evil(p) }, body })).status).toBe(
        403,
      );
      const ok = await rawRequest(url, { method: 'POST', headers: json, body });
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).rewards).toEqual([1]);
    } finally {
      await stop(child);
    }
  });

  it('stepwise sim serve: evil Host 403, real host 200, n: 100000 400, text/plain 415', async () => {
    const p = await freePort();
    const child = await serve(['sim', 'serve', '--port', String(p)], /listening on/);
    try {
      const url = `http://127.0.0.1:${p}/v1/completions`;
      const [problem] = generateSimProblems({ count: 1, seed: 1 });
      const prompt = renderPolicyPrompt(problem.question, '');
      const body = (extra: Record<string, unknown> = {}) =>
        JSON.stringify({ model: 'sim', prompt, max_tokens: 16, ...extra });
      expect(
        (await rawRequest(url, { method: 'POST', headers: { ...json, ...evil(p) }, body: body() })).status,
      ).toBe(403);
      expect((await rawRequest(url, { method: 'POST', headers: json, body: body() })).status).toBe(200);
      const many = await rawRequest(url, { method: 'POST', headers: json, body: body({ n: 100000 }) });
      expect(many.status).toBe(400);
      expect(many.body).toMatch(/n must be between 1 and \d+/);
      const plain = await rawRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: body(),
      });
      expect(plain.status).toBe(415);
    } finally {
      await stop(child);
    }
  });

  it('tokens: --token-file and STEPWISE_TOKEN keep the token out of ps; sim serve off loopback needs one', async () => {
    const token = 'tok-3f9a1c77e2';
    const file = join(home, 'token.txt');
    writeFileSync(file, `${token}\n`);
    const d = join(home, 'served');
    const p = await freePort();
    const web = await serve(
      ['serve', '--dir', d, '--port', String(p), '--host', '0.0.0.0', '--token-file', file],
      /web view on/,
    );
    try {
      expect(readFileSync(`/proc/${web.pid}/cmdline`, 'utf8')).not.toContain(token);
      const base = `http://127.0.0.1:${p}`;
      expect((await rawRequest(`${base}/api/runs`)).status).toBe(401);
      expect(
        (await rawRequest(`${base}/api/runs`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      // A token in an address is refused (it would stay in history); the login form takes it in a body.
      expect((await rawRequest(`${base}/?token=${token}`)).status).toBe(400);
      const login = await rawRequest(`${base}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      });
      expect(login.status).toBe(303);
      expect(login.headers.location).toBe('/');
    } finally {
      await stop(web);
    }

    const refused = startCli(['sim', 'serve', '--host', '0.0.0.0', '--port', '0'], home);
    const r = await refused.done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/without a token/);

    const q = await freePort();
    const sim = await serve(['sim', 'serve', '--host', '0.0.0.0', '--port', String(q)], /listening on/, {
      STEPWISE_TOKEN: token,
    });
    try {
      expect(readFileSync(`/proc/${sim.pid}/cmdline`, 'utf8')).not.toContain(token);
      const url = `http://127.0.0.1:${q}/v1/models`;
      expect((await rawRequest(url)).status).toBe(401);
      expect((await rawRequest(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await stop(sim);
    }
  });

  it('stepwise serve in a folder without stepwise outputs says what it found and asks for --dir (exit 2)', async () => {
    const stray = join(home, 'home-like');
    mkdirSync(join(stray, '.config'), { recursive: true });
    writeFileSync(join(stray, 'package.json'), '{"name": "x"}');
    writeFileSync(join(stray, '.config', 'secrets.json'), '{"k": 1}');
    const { spawn } = await import('node:child_process');
    const child = spawn(
      process.execPath,
      [new URL('../../bin/stepwise.js', import.meta.url).pathname, 'serve', '--port', '0'],
      {
        cwd: stray,
        env: { ...process.env, STEPWISE_HOME: home, STEPWISE_QUIET: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/holds no stepwise outputs/);
    expect(stderr).toMatch(/package\.json/);
    expect(stderr).toMatch(/--dir/);
    expect(stderr).not.toMatch(/secrets/);
  });
});
