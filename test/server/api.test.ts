import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionGuardOf } from '../../src/core/http.js';
import { createRng } from '../../src/core/rng.js';
import { PUBLISHED_PROCESSBENCH } from '../../src/evaluate/published.js';
import { TRACE_STATUS_LEGEND } from '../../src/search/types.js';
import { type RunningWebServer, startWebServer } from '../../src/server/app.js';
import { FILTER_PARAMS } from '../../src/server/jsonl-query.js';
import {
  isSimSpec,
  isSimulatedConfig,
  isSimulatedRecord,
  summarizeRecords,
} from '../../src/server/summary.js';
import { openStore } from '../../src/store/db.js';
import { finishRun, startRun } from '../../src/store/runs.js';
import { rawRequest } from '../support/raw-http.js';
import { tempDir } from '../support/temp.js';

const home = tempDir('stepwise-web-');
const outputs = join(home, 'outputs');
const storePath = join(home, 'store.sqlite');
let server: RunningWebServer;

beforeAll(async () => {
  mkdirSync(join(outputs, 'nested'), { recursive: true });
  writeFileSync(
    join(outputs, 'labels.jsonl'),
    `${JSON.stringify({ id: 'a#0', problem: 'P', chunks: [{ text: 'x', q: 0.5, labels: { 'abs-q': true } }], firstError: { 'abs-q': -1 } })}\n`,
  );
  writeFileSync(
    join(outputs, 'nested', 'report.json'),
    JSON.stringify({ subsets: { gsm8k: { f1: 50 } }, average_f1: 50 }),
  );
  writeFileSync(join(home, 'secret.json'), '{"secret": true}');
  symlinkSync(join(home, 'secret.json'), join(outputs, 'link.json'));
  const db = openStore(storePath);
  const id = startRun(db, 'label', { rollouts: 8 }, join(outputs, 'labels.jsonl'));
  finishRun(db, id, 'done', { solutions: 1 });
  server = await startWebServer({ roots: [outputs], storePath });
});
afterAll(() => server.close());

const get = async (path: string, init?: RequestInit) => {
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let json: Record<string, unknown> | null = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json, type: res.headers.get('content-type') };
};

describe('web API', () => {
  it('lists runs with the output located inside a served folder', async () => {
    const { json } = await get('/api/runs');
    const runs = json!.runs as Array<{ id: string; command: string }>;
    expect(runs).toHaveLength(1);
    expect(runs[0].command).toBe('label');
    const one = await get(`/api/runs/${runs[0].id}`);
    expect(one.json!.output).toEqual({ root: 0, path: 'labels.jsonl', kind: 'labels' });
    expect((await get('/api/runs/nope')).status).toBe(404);
    const served = await get('/api/runs?scope=served');
    expect(served.json).toMatchObject({ scope: 'served', total: 1, served: 1 });
    expect((served.json!.runs as unknown[]).length).toBe(1);
    expect((await get('/api/runs?scope=mine')).status).toBe(400);
  });

  it('serves the legend of the trace statuses from the code (TraceStatus), for the view to draw', async () => {
    const { status, json } = await get('/api/legend');
    expect(status).toBe(200);
    expect(json).toEqual({
      traceStatus: TRACE_STATUS_LEGEND,
      processbenchPublished: PUBLISHED_PROCESSBENCH,
      // The view's address parameters are the server's filters: declared once, in jsonl-query.ts.
      queryParams: ['text', ...FILTER_PARAMS],
      // The kinds the view asks a summary for: the summarizers' own list (src/server/summary.ts).
      summaryKinds: ['search', 'labels', 'samples', 'predictions', 'chunk-judgments', 'selection'],
    });
    // Every status a strategy writes, in legend order, each with its sentence.
    expect(Object.keys(json!.traceStatus as object)).toEqual([
      'accepted',
      'rejected',
      'fallback',
      'pruned',
      'backtracked',
      'finished',
    ]);
    expect(
      Object.values(json!.traceStatus as object).every((t) => typeof t === 'string' && t.length > 0),
    ).toBe(true);
    expect((await get('/api/legend', { method: 'POST' })).status).toBe(405);
  });

  it('lists and reads output files with their kinds', async () => {
    const { json } = await get('/api/files');
    const files = json!.files as Array<{ path: string; kind: string }>;
    expect(files.map((f) => `${f.path}:${f.kind}`).sort()).toEqual([
      'labels.jsonl:labels',
      'nested/report.json:processbench-report',
    ]);
    const page = await get('/api/file?root=0&path=labels.jsonl');
    expect(page.json!.total).toBe(1);
    expect((page.json!.records as Array<{ id: string }>)[0].id).toBe('a#0');
  });

  it('paths outside the served folders get 404, traversal and symlinks included', async () => {
    for (const p of [
      '../secret.json',
      '../../etc/passwd',
      '/etc/passwd',
      'link.json',
      'nested/../../secret.json',
      '%2e%2e/secret.json',
      'nope.json',
      'nested',
    ]) {
      const r = await get(`/api/file?root=0&path=${encodeURIComponent(p)}`);
      expect(r.status, p).toBe(404);
      expect(r.json!.error).toBeTypeOf('string');
    }
    for (const p of [
      '/../../etc/passwd',
      '/..%2f..%2fetc%2fpasswd',
      '/static/../../etc/passwd',
      '/etc/passwd',
    ]) {
      expect((await get(p)).status, p).toBe(404);
    }
    expect((await get('/api/file?root=7&path=labels.jsonl')).status).toBe(400);
  });

  it('malformed API input gets a 400 JSON error', async () => {
    const post = (path: string, body: string) =>
      get(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    for (const [path, body] of [
      ['/api/segment', 'not json'],
      ['/api/segment', '{"text": 5}'],
      ['/api/segment', '{"text": "a", "by": "words"}'],
      ['/api/verify', '{"gold": "1"}'],
      ['/api/verify', '[]'],
    ]) {
      const r = await post(path, body);
      expect(r.status, `${path} ${body}`).toBe(400);
      expect(r.type).toMatch(/application\/json/);
      expect(r.json!.error).toBeTypeOf('string');
    }
    expect((await get('/api/file?root=0&path=labels.jsonl&limit=abc')).status).toBe(400);
    const ok = await post('/api/segment', '{"text": "a\\n\\nb"}');
    expect((ok.json!.chunks as unknown[]).length).toBe(2);
    const big = await post('/api/verify', JSON.stringify({ gold: 'x'.repeat(2_000_000), pred: '1' }));
    expect(big.status).toBe(413);
  });

  it('1,000 random requests leave the server up', async () => {
    const rng = createRng(42);
    const pieces = [
      '/api/',
      'file',
      'runs',
      'files',
      '..',
      '%00',
      '%ff',
      '?',
      '&',
      'path=',
      'root=',
      '/',
      'segment',
      'verify',
      '%2e%2e',
      'x'.repeat(50),
      '~',
      '#',
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'];
    let answered = 0;
    for (let i = 0; i < 1000; i += 25) {
      await Promise.all(
        Array.from({ length: 25 }, async () => {
          let path = '/';
          for (let k = rng.int(0, 6); k > 0; k--) path += rng.pick(pieces);
          const method = rng.pick(methods);
          const body =
            method === 'POST' || method === 'PUT'
              ? rng.pick(['{', '{"text":"a"}', 'null', '[1,2', '"x"', '{"gold":"1","pred":"1"}'])
              : undefined;
          try {
            const res = await fetch(server.url + path, { method, body });
            expect(res.status).toBeLessThan(500);
            await res.arrayBuffer();
            answered++;
          } catch (e) {
            // fetch itself rejects some URLs before sending (e.g. bad percent-encoding is fine, but a '#'
            // only truncates); anything else is a real failure.
            throw new Error(`request ${method} ${path} failed: ${(e as Error).message}`);
          }
        }),
      );
    }
    expect(answered).toBe(1000);
    expect((await get('/api/health')).json!.ok).toBe(true);
  });
});

describe('web server binding and tokens', () => {
  it('a non-loopback host without a token refuses to start', async () => {
    await expect(startWebServer({ host: '0.0.0.0', roots: [outputs], storePath })).rejects.toThrow(
      /without a token/,
    );
  });

  it('with a token, requests without it get 401 and requests with it pass', async () => {
    const s = await startWebServer({ host: '0.0.0.0', token: 't0k', roots: [outputs], storePath });
    try {
      const base = `http://127.0.0.1:${s.port}`;
      expect((await fetch(`${base}/api/runs`)).status).toBe(401);
      // A malformed cookie is no token (401), not a server error.
      expect((await fetch(`${base}/api/runs`, { headers: { cookie: 'stepwise_token=%E0%A4' } })).status).toBe(
        401,
      );
      expect((await fetch(`${base}/`)).status).toBe(401);
      expect((await fetch(`${base}/api/runs`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
      expect((await fetch(`${base}/api/runs`, { headers: { authorization: 'Bearer t0k' } })).status).toBe(
        200,
      );
      // The login form: the token in a POST body sets the cookie; in an address it is refused
      // everywhere (addresses stay in browser history).
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const login = await fetch(`${base}/login`, {
        method: 'POST',
        headers: form,
        body: 'token=t0k',
        redirect: 'manual',
      });
      expect(login.status).toBe(303);
      expect(login.headers.get('location')).toBe('/');
      const setCookie = login.headers.get('set-cookie')!;
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).toMatch(/SameSite=Strict/);
      const cookie = setCookie.split(';')[0];
      expect((await fetch(`${base}/api/runs`, { headers: { cookie } })).status).toBe(200);
      const page = await fetch(`${base}/`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/app.js');
      const wrong = await fetch(`${base}/login`, { method: 'POST', headers: form, body: 'token=wrong' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('set-cookie')).toBeNull();
      expect((await fetch(`${base}/login`, { method: 'POST', body: 'token=t0k' })).status).toBe(415);
      const loginPage = await fetch(`${base}/`);
      expect(loginPage.status).toBe(401);
      expect(await loginPage.text()).toContain('action="/login"');
      for (const p of ['/?token=t0k', '/api/runs?token=t0k', '/app.js?token=t0k', '/login?token=t0k'])
        expect((await fetch(`${base}${p}`, { redirect: 'manual' })).status, p).toBe(400);
    } finally {
      await s.close();
    }
  });
});

describe('summaries and simulated marks', () => {
  it('recognises simulated specs, configs and records, and nothing else', () => {
    for (const spec of [
      'sim',
      'sim?step_error=0.1',
      'sim:generative',
      'critic:sim',
      'generative:sim?sens=0.9',
    ])
      expect(isSimSpec(spec), spec).toBe(true);
    for (const spec of [
      'openai:simple-model',
      'generative:openai:sim-judge',
      'gguf:/m/sim.gguf',
      '',
      undefined,
    ])
      expect(isSimSpec(spec), String(spec)).toBe(false);
    expect(isSimulatedConfig({ policy: 'sim', rollouts: 8 })).toBe(true);
    expect(isSimulatedConfig({ dataset: 'sim' })).toBe(true);
    expect(isSimulatedConfig({ policy: 'openai:qwen', judge: 'prm:openai:x' })).toBe(false);
    expect(isSimulatedRecord({ id: 'sim/0/3', chunks: [] })).toBe(true);
    expect(isSimulatedRecord({ id: 'gsm8k/3', chunks: [] })).toBe(false);
    expect(isSimulatedRecord([{ id: 'x', generator: 'stepwise-sim-policy (simulated)' }])).toBe(true);
    expect(isSimulatedRecord({ kind: 'stepwise-demo', world: 'tiny', simulated: false })).toBe(false);
    expect(isSimulatedRecord({ kind: 'stepwise-demo', world: 'sim', simulated: true })).toBe(true);
  });

  it('summarizes a search file: accuracy, cost per problem, rejections and backtracks', () => {
    const cost = (p: number, j: number) => ({
      policy: { calls: 1, samples: 1, promptTokens: p, completionTokens: 0 },
      judge: { calls: 2, samples: 2, promptTokens: j, completionTokens: 0 },
    });
    const s = summarizeRecords('search', [
      {
        strategy: 'greedy-prm',
        correct: true,
        cost: cost(100, 40),
        trace: [{ status: 'accepted' }, { status: 'rejected' }, { status: 'backtracked' }],
        backtracks: [{ from: 2, to: 0 }],
      },
      {
        strategy: 'greedy-prm',
        correct: false,
        cost: cost(300, 0),
        trace: [{ status: 'accepted' }],
        backtracks: [],
      },
    ]);
    expect(s).toEqual({
      kind: 'search',
      problems: 2,
      strategies: ['greedy-prm'],
      checked: 2,
      correct: 1,
      accuracy: 0.5,
      perProblem: { policyTokens: 200, judgeTokens: 20, policyCalls: 1, judgeCalls: 2 },
      attempts: 4,
      rejected: 1,
      backtracks: 1,
      withBacktracks: [0],
      withRejections: [0],
    });
  });

  it('summarizes labels per signal (soft labels positive at 0.5) and predictions as pairs', () => {
    const labels = summarizeRecords('labels', [
      {
        finalAnswerCorrect: true,
        cost: { rollouts: 8 },
        firstError: { 'abs-q': 1, 'ms-soft': -1 },
        chunks: [
          { labels: { 'abs-q': true, 'ms-soft': 0.75 } },
          { labels: { 'abs-q': false, 'ms-soft': 0.25 } },
        ],
      },
    ]);
    expect(labels).toMatchObject({
      solutions: 1,
      chunks: 2,
      positiveShare: { 'abs-q': 0.5, 'ms-soft': 0.5 },
      withFirstError: { 'abs-q': 1, 'ms-soft': 0 },
      finalAnswerCorrect: 1,
      rollouts: 8,
    });
    const preds = summarizeRecords('predictions', [
      { id: 'a', subset: 'gsm8k', label: 2, prediction: 2 },
      { id: 'b', subset: 'gsm8k', label: -1, prediction: null },
      { id: 'c', subset: 'math', label: 0, prediction: 3 },
    ]);
    expect(preds).toMatchObject({
      samples: 3,
      exact: 1,
      subsets: { gsm8k: { n: 2, exact: 1 }, math: { n: 1, exact: 0 } },
      cells: [
        [2, 2, 1],
        [-1, null, 1],
        [0, 3, 1],
      ],
    });
  });

  it('serves summaries of JSONL files only, and finds a record by id', async () => {
    const sum = await get('/api/summary?root=0&path=labels.jsonl');
    expect(sum.status).toBe(200);
    expect((sum.json!.summary as { solutions: number }).solutions).toBe(1);
    expect((await get('/api/summary?root=0&path=nested%2Freport.json')).status).toBe(400);
    expect((await get('/api/summary?root=0&path=..%2Fsecret.json')).status).toBe(400);
    expect((await get('/api/summary?root=0&path=..%2Fsecret.jsonl')).status).toBe(404);
    const byId = await get(`/api/file?root=0&path=labels.jsonl&id=${encodeURIComponent('a#0')}`);
    expect(byId.json!.offset).toBe(0);
    expect((byId.json!.records as Array<{ id: string }>)[0].id).toBe('a#0');
    expect((await get('/api/file?root=0&path=labels.jsonl&id=nope')).status).toBe(404);
    const file = await get('/api/file?root=0&path=labels.jsonl');
    expect(file.json!.runs).toEqual([expect.objectContaining({ command: 'label', simulated: false })]);
  });
});

describe('stricter input', () => {
  it('a missing path is a 400 and unknown body fields are rejected', async () => {
    const r = await fetch(`${server.url}/api/file?root=0`);
    expect(r.status).toBe(400);
    const v = await fetch(`${server.url}/api/verify`, {
      method: 'POST',
      body: JSON.stringify({ gold: '1', pred: '1', extra: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(v.status).toBe(400);
    expect(((await v.json()) as { error: string }).error).toMatch(/extra|unrecognized/i);
  });
});

describe('attacks from web pages and stray files', () => {
  it('answers only its own host names: a DNS-rebinding Host gets 403 on every route', async () => {
    const evil = { host: `evil.example:${server.port}` };
    for (const path of ['/api/runs', '/api/files', '/', '/app.js', '/api/file?root=0&path=labels.jsonl']) {
      const r = await rawRequest(server.url + path, { headers: evil });
      expect(r.status, path).toBe(403);
      expect(r.body, path).not.toContain('labels.jsonl');
    }
    const post = await rawRequest(`${server.url}/api/segment`, {
      method: 'POST',
      headers: { ...evil, 'content-type': 'application/json' },
      body: '{"text":"a"}',
    });
    expect(post.status).toBe(403);
    for (const host of [
      'evil.example',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '[::2]',
      'localhost:80@evil',
    ])
      expect((await rawRequest(`${server.url}/api/runs`, { headers: { host } })).status, host).toBe(403);
    for (const host of [
      `127.0.0.1:${server.port}`,
      `localhost:${server.port}`,
      'localhost',
      'LOCALHOST:1',
      `[::1]:${server.port}`,
    ])
      expect((await rawRequest(`${server.url}/api/runs`, { headers: { host } })).status, host).toBe(200);
  });

  it('a folder served by mistake gives out no hidden, package or non-output file: each is a 404 like a missing one', async () => {
    const home = tempDir('stepwise-home-');
    mkdirSync(join(home, '.docker'));
    mkdirSync(join(home, '.config', 'gcloud'), { recursive: true });
    mkdirSync(join(home, 'node_modules', 'pkg'), { recursive: true });
    mkdirSync(join(home, 'runs'));
    const secret = '{"auths": {"registry": {"auth": "c2VjcmV0"}}}';
    writeFileSync(join(home, '.docker', 'config.json'), secret);
    writeFileSync(join(home, '.config', 'gcloud', 'application_default_credentials.json'), secret);
    writeFileSync(join(home, 'creds.txt'), secret);
    writeFileSync(join(home, 'notes.env'), 'API_KEY=abc');
    writeFileSync(join(home, 'node_modules', 'pkg', 'package.json'), '{"name": "pkg"}');
    writeFileSync(join(home, 'broken.json'), 'API_KEY=abc');
    writeFileSync(join(home, '.hidden.jsonl'), secret);
    writeFileSync(join(home, 'runs', 'labels.jsonl'), '{"id": "a", "chunks": [], "firstError": {}}\n');
    symlinkSync(join(home, '.docker', 'config.json'), join(home, 'runs', 'docker.json'));
    const s = await startWebServer({ roots: [home], storePath });
    try {
      const read = async (path: string) => {
        const r = await fetch(`${s.url}/api/file?root=0&path=${encodeURIComponent(path)}`);
        return { status: r.status, body: await r.text(), type: r.headers.get('content-type') };
      };
      const missing = await read('does-not-exist.json');
      expect(missing.status).toBe(404);
      for (const path of [
        '.docker/config.json',
        '.config/gcloud/application_default_credentials.json',
        'creds.txt',
        'notes.env',
        'node_modules/pkg/package.json',
        'broken.json',
        '.hidden.jsonl',
        'runs/docker.json',
        'runs/../.docker/config.json',
        './.docker/config.json',
      ]) {
        expect(await read(path), path).toEqual(missing);
        if (path.endsWith('.jsonl')) {
          const sum = await fetch(`${s.url}/api/summary?root=0&path=${encodeURIComponent(path)}`);
          expect(sum.status, `summary ${path}`).toBe(404);
        }
      }
      expect((await read('runs/labels.jsonl')).status).toBe(200);
      const listed = (await (await fetch(`${s.url}/api/files`)).json()) as { files: Array<{ path: string }> };
      // broken.json is refused above like a missing file, so it is not listed either (issue #32).
      expect(listed.files.map((f) => f.path)).toEqual(['runs/labels.jsonl']);
    } finally {
      await s.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('JSON endpoints take only application/json bodies (a page can send text/plain without asking): 415', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
    ])
      for (const path of ['/api/segment', '/api/verify']) {
        const r = await rawRequest(server.url + path, {
          method: 'POST',
          headers: type ? { 'content-type': type } : {},
          body: '{"text":"a","gold":"1","pred":"1"}',
        });
        expect(r.status, `${path} ${type}`).toBe(415);
      }
    const ok = await rawRequest(`${server.url}/api/segment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"text":"a"}',
    });
    expect(ok.status).toBe(200);
  });

  it('the page comes with its CSP, is never framed, and leaks no Referer', async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-security-policy')).toBe("default-src 'self'; script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\bstyle=/);
  });

  it('server limits: slow requests are cut, connections are capped', () => {
    expect(server.server.requestTimeout).toBe(30_000);
    expect(server.server.headersTimeout).toBe(10_000);
    // Capped by the guard (in total and per address), which makes room by closing half-open
    // connections; test/server/connections.test.ts holds 300 of them.
    expect(connectionGuardOf(server.server)?.maxConnections).toBe(256);
    expect(connectionGuardOf(server.server)?.maxConnectionsPerClient).toBe(128);
  });
});
