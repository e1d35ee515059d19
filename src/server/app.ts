import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { StepwiseError } from '../core/errors.js';
import {
  allowedHostNames,
  applyServerLimits,
  checkHost,
  HttpError,
  isLoopbackHost,
  listenOrExplain,
  readBody,
  requireJsonBody,
  sameToken,
  sendJson,
} from '../core/http.js';
import { SEGMENT_MODES, segment } from '../core/segment.js';
import { PUBLISHED_PROCESSBENCH } from '../evaluate/published.js';
import { type BenchReport, benchChart } from '../search/bench.js';
import { TRACE_STATUS_LEGEND } from '../search/types.js';
import { type Db, openStore } from '../store/db.js';
import { getRun, listRuns, type RunRecord } from '../store/runs.js';
import { explainEquivalence } from '../verify/index.js';
import { VERSION } from '../version.js';
import type {
  CompareResponse,
  CompareSide,
  FileMeta,
  FileRun,
  FilesResponse,
  HealthResponse,
  IndexResponse,
  JsonFileResponse,
  JsonlPageResponse,
  LegendResponse,
  RunResponse,
  RunsResponse,
  RunView,
  SegmentResponse,
  SummaryResponse,
  VerifyResponse,
} from './api.js';
import {
  type FileKind,
  inspectFile,
  isServablePath,
  listFiles,
  MAX_JSON_BYTES,
  openOutput,
  safeResolve,
} from './files.js';
import { IndexCache, type JsonlIndex } from './jsonl-index.js';
import {
  comparePairs,
  FILTER_PARAMS,
  type Filters,
  filterDefs,
  findId,
  MAX_TEXT_QUERY,
  matchingRecords,
  pairedDifference,
  pairRecords,
  readRecords,
} from './jsonl-query.js';
import type { ServedFile } from './safe-open.js';
import { isSimulatedConfig, SUMMARY_KINDS } from './summary.js';

/**
 * The web view's server: a JSON API over the store and the output files of configured folders,
 * and the static UI in `web/`. Loopback by default; any other bind needs a token. It answers only
 * requests addressed to its own names (no DNS rebinding), JSON bodies only as application/json,
 * and only output files (a hidden, package or non-output file is answered like a missing one).
 */
export interface WebServerOptions {
  port?: number;
  host?: string;
  /**
   * Required for a non-loopback host. Requests then need it: a Bearer header or the
   * `stepwise_token` cookie, which the login form (`/login`, a POST) sets. A token in an address
   * is refused (400): addresses stay in the browser's history.
   */
  token?: string;
  /** Folders whose JSON/JSONL outputs can be read (default: the current folder). */
  roots?: string[];
  /** SQLite store path (default: the standard store). */
  storePath?: string;
  /** Largest request body (default 1 MiB). */
  maxBodyBytes?: number;
}

export interface RunningWebServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

const WEB_DIR = new URL('../../web/', import.meta.url);
const STATIC: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
  '/favicon.svg': 'favicon.svg',
};
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};
/**
 * The page runs only its own script (no inline script, no script from data shown in it) and is
 * never framed; the token never leaves in a Referer.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Static files the login form needs, served without the token (they are the package's own, public). */
const PUBLIC_STATIC = new Set(['/style.css', '/favicon.svg']);

/** Largest login form body. */
const MAX_LOGIN_BYTES = 4096;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The login form: the token goes in a POST body to /login, never in an address (addresses stay in
 * the browser's history). No script, so the page's CSP holds as it is.
 */
function sendLoginPage(res: ServerResponse, status: number, head: boolean, error: string | null): void {
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>stepwise: log in</title>
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/style.css">
</head>
<body>
  <main id="login">
    <h1>stepwise</h1>
    <p>This server needs its token (the one given to <code>stepwise serve</code> with --token-file or STEPWISE_TOKEN).</p>
    ${error ? `<p class="error" id="login-error">${escapeHtml(error)}</p>` : ''}
    <form method="post" action="/login">
      <label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
      <button type="submit">Log in</button>
    </form>
  </main>
</body>
</html>
`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...PAGE_SECURITY_HEADERS,
  });
  res.end(head ? undefined : html);
}

/**
 * `GET /login`: the form. `POST /login` with the form's body (`token=…`, as a browser sends a
 * form): the right token sets the HttpOnly cookie and redirects to `/`; a wrong one shows the form
 * again (401). The token travels only in the body, so no address the browser keeps holds it.
 */
async function login(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    sendLoginPage(res, 200, req.method === 'HEAD', null);
    return;
  }
  if (req.method !== 'POST') throw new HttpError(405, 'use GET for the form or POST it');
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new HttpError(415, 'post the login form (application/x-www-form-urlencoded)');
  const given = new URLSearchParams(await readBody(req, MAX_LOGIN_BYTES)).get('token');
  if (!sameToken(given, token)) {
    sendLoginPage(res, 401, false, 'Wrong token.');
    return;
  }
  res.writeHead(303, {
    location: '/',
    'set-cookie': `stepwise_token=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
    'cache-control': 'no-store',
    ...PAGE_SECURITY_HEADERS,
  });
  res.end();
}

async function jsonBody<T>(req: IncomingMessage, max: number, schema: z.ZodType<T>): Promise<T> {
  if (req.method !== 'POST') throw new HttpError(405, 'use POST with a JSON body');
  requireJsonBody(req);
  let value: unknown;
  try {
    value = JSON.parse(await readBody(req, max));
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(400, `body is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The token of a request: its Bearer header or its cookie (never its address: addresses end up in logs and history). */
function tokenOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7);
  const cookie = /(?:^|;\s*)stepwise_token=([^;]+)/.exec(req.headers.cookie ?? '');
  if (cookie) {
    try {
      return decodeURIComponent(cookie[1]);
    } catch {
      return null; // a malformed cookie is no token, not a server error
    }
  }
  return null;
}

/** The one answer for a file the API does not serve, whatever the reason (missing, hidden, not an output). */
const noSuchFile = () => new HttpError(404, 'no such file');
const tooLarge = (file: string) =>
  new HttpError(
    413,
    `${file.split('/').pop()} is a JSON document larger than ${MAX_JSON_BYTES >> 20} MiB, more than the web view parses at once (JSONL files of any size are paged)`,
  );

/** Filter values of a request (each checked by the filter that reads it). */
function filtersOf(url: URL): Filters {
  const out: Filters = {};
  for (const p of FILTER_PARAMS) {
    const v = url.searchParams.get(p);
    if (v === null || v === '') continue;
    if (v.length > 200) throw new HttpError(400, `${p} is longer than 200 characters`);
    out[p] = v;
  }
  return out;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

function intParam(url: URL, name: string, def: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new HttpError(400, `${name} must be an integer in [0, ${max}]`);
  return n;
}

const SegmentBody = z.strictObject({
  text: z.string().max(1_000_000),
  by: z.enum(SEGMENT_MODES as [string, ...string[]]).default('paragraph'),
});
const VerifyBody = z.strictObject({ gold: z.string().max(100_000), pred: z.string().max(100_000) });

/** Start the web view and API. */
export async function startWebServer(options: WebServerOptions = {}): Promise<RunningWebServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.token) {
    throw new StepwiseError(
      `refusing to serve on ${host} without a token: pass --token (or bind 127.0.0.1)`,
      { exitCode: 2 },
    );
  }
  const roots = (options.roots?.length ? options.roots : [process.cwd()]).map((r) => resolve(r));
  /**
   * The served folders as the page names them: relative to the server's folder when inside it,
   * else by their own name. An absolute path would tell every page viewer the machine's layout
   * and user name; the page only needs to tell the folders apart.
   */
  const rootNames = roots.map((r) => {
    const rel = relative(process.cwd(), r);
    return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? basename(r) : rel;
  });
  const maxBody = options.maxBodyBytes ?? 1 << 20;
  const hosts = allowedHostNames(host);
  let db: Db | undefined;
  const store = () => {
    db ??= openStore(options.storePath);
    return db;
  };

  /**
   * The output a request names (`root`, `path`), opened: every read of it goes through the
   * returned file (see src/server/safe-open.ts), which `use` gets and which is closed afterwards.
   */
  const withFileParam = async <T>(
    url: URL,
    use: (file: ServedFile, root: number, rel: string) => T | Promise<T>,
  ): Promise<T> => {
    const root = intParam(url, 'root', 0, roots.length - 1);
    const rel = url.searchParams.get('path');
    if (rel === null || rel === '') throw new HttpError(400, 'the path parameter is required');
    const file = openOutput(roots[root], rel);
    if (!file) throw noSuchFile();
    try {
      return await use(file, root, rel);
    } finally {
      file.close();
    }
  };

  const indexes = new IndexCache(16);

  /**
   * A JSONL file's index, brought up to date with the file. Waits at most `waitMs` for a build
   * (or extension) to finish; the file stays open until the build is done, whoever waits: a
   * request that stops waiting hands its file to the build (`keep` then returns true).
   */
  const indexOf = async (
    file: ServedFile,
    kind: FileKind,
    waitMs = Number.POSITIVE_INFINITY,
  ): Promise<{ index: JsonlIndex; ready: boolean; kept: boolean }> => {
    const { index, ready } = indexes.get(file.realPath, file.fd, kind);
    const settled = ready.then(
      () => true,
      () => true,
    );
    const done = Number.isFinite(waitMs)
      ? await Promise.race([settled, sleep(waitMs).then(() => false)])
      : await settled;
    if (!done) {
      settled.then(() => file.close());
      return { index, ready: false, kept: true };
    }
    await ready.catch((e: unknown) => {
      throw new HttpError(500, `could not read the file: ${(e as Error).message}`);
    });
    return { index, ready: true, kept: false };
  };

  /** Whether a file is still being written: it holds bytes beyond the last record, or changed in the last seconds. */
  const isGrowing = (index: JsonlIndex) =>
    index.indexedBytes < index.size || Date.now() - index.mtimeMs < 5000;

  /** Both files of a comparison, opened (each a search output): `use` reads them, then they are closed. */
  const withSearchPair = async <T>(
    url: URL,
    use: (a: { file: ServedFile; meta: FileMeta }, b: { file: ServedFile; meta: FileMeta }) => Promise<T>,
  ): Promise<T> => {
    const opened: ServedFile[] = [];
    const side = (prefix: 'a' | 'b') => {
      const root = intParam(url, `${prefix}root`, 0, roots.length - 1);
      const rel = url.searchParams.get(`${prefix}path`);
      if (!rel) throw new HttpError(400, `the ${prefix}path parameter is required`);
      if (!rel.endsWith('.jsonl'))
        throw new HttpError(400, `${prefix}path: compare reads JSONL search outputs`);
      const file = openOutput(roots[root], rel);
      if (!file) throw noSuchFile();
      opened.push(file);
      const { kind, simulated } = inspectFile(file);
      if (kind !== 'search')
        throw new HttpError(400, `${prefix}path: ${rel} is a ${kind} file, not a search output`);
      const runs = runsWriting(file.realPath);
      const meta: FileMeta = {
        root,
        path: rel,
        kind,
        simulated: simulated || runs.some((r) => r.simulated),
        runs,
      };
      return { file, meta };
    };
    try {
      return await use(side('a'), side('b'));
    } finally {
      for (const f of opened) f.close();
    }
  };

  /**
   * Where a run's output lies inside a served folder. A relative path (as some commands record
   * it) is read against the server's own folder: the run's folder is not recorded, and guessing
   * another folder could point at a different file of the same name.
   */
  const locate = (output: string | null): { root: number; path: string; abs: string } | null => {
    if (!output) return null;
    const candidate = resolve(output);
    for (let i = 0; i < roots.length; i++) {
      const rel = candidate.startsWith(roots[i] + '/') ? candidate.slice(roots[i].length + 1) : null;
      const abs = rel ? safeResolve(roots[i], rel) : null;
      if (rel && abs) return { root: i, path: rel, abs };
    }
    return null;
  };

  /**
   * Whether a run writes into a served folder: its output is there, or will be (a running job
   * whose file is not written yet) — the runs the web view can show the work of.
   */
  const writesIntoServed = (output: string | null): boolean => {
    if (!output) return false;
    const candidate = resolve(output);
    return roots.some(
      (root) => candidate.startsWith(`${root}/`) && isServablePath(candidate.slice(root.length + 1)),
    );
  };

  /** A run as the UI gets it: the record, whether it is simulated, and its output's place in the served folders. */
  const runView = (run: RunRecord): RunView => {
    const at = locate(run.output);
    return {
      ...run,
      simulated: isSimulatedConfig(run.config),
      outputFile: at ? { root: at.root, path: at.path } : null,
      served: at !== null || writesIntoServed(run.output),
    };
  };

  /** Runs whose output is this file (absolute, real path). */
  const runsWriting = (abs: string): FileRun[] =>
    listRuns(store(), 10_000)
      .map(runView)
      .filter((r) => r.outputFile && safeResolve(roots[r.outputFile.root], r.outputFile.path) === abs)
      .map((r) => ({ id: r.id, name: r.name, command: r.command, status: r.status, simulated: r.simulated }));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      throw new HttpError(400, 'malformed URL');
    }
    checkHost(req, hosts);
    const path = url.pathname;
    if (options.token) {
      // A token in an address stays in the browser's history (a redirect does not remove the
      // address it came from) and in proxy logs: refused everywhere, the answer says how to log in.
      if (url.searchParams.has('token'))
        throw new HttpError(
          400,
          'a token in the address stays in browser history and logs: log in at /login (a form), or send it as a Bearer header',
        );
      if (path === '/login') {
        await login(req, res, options.token);
        return;
      }
      if (!sameToken(tokenOf(req), options.token)) {
        // The page itself answers with the login form (still 401); the assets it needs are public.
        if (path === '/' || path === '/index.html') {
          sendLoginPage(res, 401, req.method === 'HEAD', null);
          return;
        }
        if (!PUBLIC_STATIC.has(path)) throw new HttpError(401, 'missing or wrong token');
      }
    }
    if (!path.startsWith('/api/')) {
      const file = STATIC[path];
      if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) throw new HttpError(404, 'not found');
      const body = readFileSync(new URL(file, WEB_DIR));
      const headers: Record<string, string> = {
        'content-type': TYPES[file.split('.').pop() ?? 'html'],
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        ...PAGE_SECURITY_HEADERS,
      };
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === '/api/segment') {
      const b = await jsonBody(req, maxBody, SegmentBody);
      sendJson(res, 200, {
        chunks: segment(b.text, b.by as (typeof SEGMENT_MODES)[number]),
      } satisfies SegmentResponse);
      return;
    }
    if (path === '/api/verify') {
      const b = await jsonBody(req, maxBody, VerifyBody);
      sendJson(res, 200, explainEquivalence(b.gold, b.pred) satisfies VerifyResponse);
      return;
    }
    if (req.method !== 'GET') throw new HttpError(405, 'use GET');
    if (path === '/api/health') {
      sendJson(res, 200, { ok: true, version: VERSION } satisfies HealthResponse);
      return;
    }
    if (path === '/api/legend') {
      sendJson(res, 200, {
        traceStatus: TRACE_STATUS_LEGEND,
        processbenchPublished: PUBLISHED_PROCESSBENCH,
        queryParams: ['text', ...FILTER_PARAMS],
        summaryKinds: SUMMARY_KINDS,
      } satisfies LegendResponse);
      return;
    }
    if (path === '/api/chart.svg') {
      // The chart `bench search` writes beside its report, drawn again from the report (never a
      // served .svg file: an SVG from a folder could carry script).
      const report = await withFileParam(url, (file) => {
        const { kind, refusal } = inspectFile(file);
        if (kind !== 'accuracy-vs-compute' || refusal !== null) throw noSuchFile();
        try {
          return JSON.parse(file.readText()) as BenchReport;
        } catch {
          throw noSuchFile();
        }
      });
      const svg = benchChart({
        ...report,
        points: (Array.isArray(report.points) ? report.points : []).filter(
          (p) =>
            p &&
            typeof p === 'object' &&
            typeof p.accuracy === 'number' &&
            typeof p.strategy === 'string' &&
            typeof p.costPerProblem?.totalTokens === 'number',
        ),
      });
      res.writeHead(200, {
        'content-type': 'image/svg+xml; charset=utf-8',
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        ...PAGE_SECURITY_HEADERS,
        // Nothing in the drawing runs or loads anything.
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      });
      res.end(svg);
      return;
    }
    if (path === '/api/runs') {
      // scope=served: only runs whose outputs are (or will be) in the served folders — the Runs
      // page's default, so a store shared by many projects does not bury this folder's runs.
      const scope = url.searchParams.get('scope') ?? 'all';
      if (scope !== 'all' && scope !== 'served') throw new HttpError(400, 'scope must be all or served');
      const limit = intParam(url, 'limit', 200, 10_000);
      const all = listRuns(store(), 10_000).map(runView);
      const served = all.filter((r) => r.served);
      sendJson(res, 200, {
        runs: (scope === 'served' ? served : all).slice(0, limit),
        scope,
        total: all.length,
        served: served.length,
      } satisfies RunsResponse);
      return;
    }
    const runMatch = /^\/api\/runs\/([\w.-]{1,100})$/.exec(path);
    if (runMatch) {
      const run = getRun(store(), runMatch[1]);
      if (!run) throw new HttpError(404, 'no such run');
      const view = runView(run);
      const at = locate(run.output);
      const opened = at ? openOutput(roots[at.root], at.path) : null;
      let output: RunResponse['output'] = null;
      if (at && opened) {
        try {
          output = { root: at.root, path: at.path, kind: inspectFile(opened).kind };
        } finally {
          opened.close();
        }
      }
      sendJson(res, 200, { run: view, output } satisfies RunResponse);
      return;
    }
    if (path === '/api/files') {
      const writtenBySim = new Set(
        listRuns(store(), 10_000)
          .map(runView)
          .filter((r) => r.simulated && r.outputFile)
          .map((r) => `${r.outputFile?.root}:${r.outputFile?.path}`),
      );
      const files = listFiles(roots).map((f) => ({
        ...f,
        simulated: f.simulated || writtenBySim.has(`${f.root}:${f.path}`),
      }));
      sendJson(res, 200, { roots: rootNames, files } satisfies FilesResponse);
      return;
    }
    if (path === '/api/file') {
      await withFileParam(url, async (file, root, rel) => {
        const { kind, simulated, refusal } = inspectFile(file);
        if (refusal === 'too-large') throw tooLarge(rel);
        // Not an output after all: answered exactly like a missing file, so nothing can be probed.
        if (refusal === 'not-json') throw noSuchFile();
        const runs = runsWriting(file.realPath);
        const meta: FileMeta = {
          root,
          path: rel,
          kind,
          simulated: simulated || runs.some((r) => r.simulated),
          runs,
        };
        if (!rel.endsWith('.jsonl')) {
          let data: unknown;
          try {
            data = JSON.parse(file.readText());
          } catch {
            throw noSuchFile();
          }
          sendJson(res, 200, { ...meta, data } satisfies JsonFileResponse);
          return;
        }
        const id = url.searchParams.get('id');
        if (id !== null && id.length > 1000) throw new HttpError(400, 'id longer than 1000 characters');
        const text = url.searchParams.get('text') ?? '';
        if (text.length > MAX_TEXT_QUERY)
          throw new HttpError(400, `text longer than ${MAX_TEXT_QUERY} characters`);
        const filters = filtersOf(url);
        const offset = intParam(url, 'offset', 0, 1e9);
        const limit = intParam(url, 'limit', 100, 5000);
        const { index } = await indexOf(file, kind);
        let start = offset;
        let matched = index.records;
        let which: ArrayLike<number>;
        const range = (from: number, n: number) =>
          Array.from({ length: Math.max(0, Math.min(n, index.records - from)) }, (_, k) => from + k);
        if (id !== null) {
          // The page of the whole file that starts at the record with this id.
          start = await findId(index, file.fd, id);
          if (start < 0) throw new HttpError(404, 'no record with that id');
          which = range(start, limit);
        } else {
          const hits = await matchingRecords(index, file.fd, filters, text || undefined);
          if (hits) {
            matched = hits.length;
            which = hits.subarray(Math.min(offset, hits.length), Math.min(offset + limit, hits.length));
          } else which = range(Math.min(offset, index.records), limit);
        }
        const read = await readRecords(index, file.fd, which);
        const good = read.filter((r) => !r.bad);
        sendJson(res, 200, {
          ...meta,
          total: index.records,
          matched,
          offset: start,
          records: good.map((r) => r.value),
          indices: good.map((r) => r.index),
          badLines: read.filter((r) => r.bad).map((r) => r.line),
          growing: isGrowing(index),
        } satisfies JsonlPageResponse);
      });
      return;
    }
    if (path === '/api/index') {
      if (!url.searchParams.get('path')?.endsWith('.jsonl'))
        throw new HttpError(400, 'indexes are of JSONL files');
      const wait = intParam(url, 'wait', 1000, 20_000);
      const root = intParam(url, 'root', 0, roots.length - 1);
      const rel = url.searchParams.get('path') ?? '';
      // Opened here rather than through withFileParam: a build that outlasts the wait keeps the file.
      const file = openOutput(roots[root], rel);
      if (!file) throw noSuchFile();
      let kept = false;
      try {
        const { kind } = inspectFile(file);
        const got = await indexOf(file, kind, wait);
        kept = got.kept;
        const { index, ready } = got;
        sendJson(res, 200, {
          root,
          path: rel,
          kind,
          ready,
          bytes: index.indexedBytes,
          size: index.size,
          records: index.records,
          indexBytes: index.bytes,
          seconds: index.seconds,
          filters: ready ? filterDefs(index, filtersOf(url)) : [],
        } satisfies IndexResponse);
      } finally {
        if (!kept) file.close();
      }
      return;
    }
    if (path === '/api/summary') {
      if (!url.searchParams.get('path')?.endsWith('.jsonl'))
        throw new HttpError(400, 'summaries are of JSONL files');
      await withFileParam(url, async (file) => {
        const { kind } = inspectFile(file);
        const { index } = await indexOf(file, kind);
        sendJson(res, 200, { kind, summary: index.summaryResult() } satisfies SummaryResponse);
      });
      return;
    }
    if (path === '/api/compare') {
      const offset = intParam(url, 'offset', 0, 1e9);
      const limit = intParam(url, 'limit', 50, 1000);
      await withSearchPair(url, async (A, B) => {
        const a = (await indexOf(A.file, 'search')).index;
        const b = (await indexOf(B.file, 'search')).index;
        const pairing = pairRecords(a, b);
        const kept = comparePairs(a, b, pairing, url.searchParams.get('only') ?? undefined);
        // Correctness over the pairs both sides checked; tokens over every pair.
        const accDiffs: number[] = [];
        const tokDiffs = new Float64Array(pairing.a.length);
        let correctA = 0;
        let correctB = 0;
        let both = 0;
        let onlyA = 0;
        let onlyB = 0;
        let neither = 0;
        for (let k = 0; k < pairing.a.length; k++) {
          const ca = a.cols.correct.get(pairing.a[k]);
          const cb = b.cols.correct.get(pairing.b[k]);
          tokDiffs[k] = b.cols.tokens.get(pairing.b[k]) - a.cols.tokens.get(pairing.a[k]);
          if (ca < 0 || cb < 0) continue;
          accDiffs.push(cb - ca);
          correctA += ca;
          correctB += cb;
          if (ca && cb) both++;
          else if (ca) onlyA++;
          else if (cb) onlyB++;
          else neither++;
        }
        const matched = kept ? kept.length : pairing.a.length;
        const page: number[] = [];
        for (let k = offset; k < Math.min(matched, offset + limit); k++) page.push(kept ? kept[k] : k);
        const ra = await readRecords(
          a,
          A.file.fd,
          page.map((k) => pairing.a[k]),
        );
        const rb = await readRecords(
          b,
          B.file.fd,
          page.map((k) => pairing.b[k]),
        );
        const sideOf = (index: JsonlIndex, i: number, value: unknown): CompareSide => {
          const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
          const c = index.cols.correct.get(i);
          return {
            index: i,
            answer: typeof v.answer === 'string' ? v.answer : null,
            correct: c < 0 ? null : c === 1,
            tokens: index.cols.tokens.get(i),
            resets: index.cols.resets.get(i),
            fallbacks: index.cols.fallbacks.get(i),
            strategy: typeof v.strategy === 'string' ? v.strategy : null,
          };
        };
        const rows = ra.slice(0, Math.min(ra.length, rb.length)).map((x, k) => {
          const v = (typeof x.value === 'object' && x.value !== null ? x.value : {}) as Record<
            string,
            unknown
          >;
          const q =
            typeof v.question === 'string' ? v.question : typeof v.problem === 'string' ? v.problem : null;
          return {
            id: typeof v.id === 'string' ? v.id : null,
            question: q === null ? null : q.slice(0, 300),
            a: sideOf(a, x.index, x.value),
            b: sideOf(b, rb[k].index, rb[k].value),
          };
        });
        sendJson(res, 200, {
          a: { ...A.meta, total: a.records },
          b: { ...B.meta, total: b.records },
          paired: pairing.a.length,
          onlyA: pairing.onlyA,
          onlyB: pairing.onlyB,
          checked: accDiffs.length,
          correctA,
          correctB,
          bothCorrect: both,
          onlyACorrect: onlyA,
          onlyBCorrect: onlyB,
          neitherCorrect: neither,
          accuracy: pairedDifference(accDiffs),
          tokens: pairedDifference(tokDiffs),
          matched,
          offset,
          rows,
        } satisfies CompareResponse);
      });
      return;
    }
    throw new HttpError(404, 'no such endpoint');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) sendJson(res, e.status, { error: e.message });
      else sendJson(res, 500, { error: (e as Error)?.message ?? 'internal error' });
    });
  });
  applyServerLimits(server);
  await listenOrExplain(server, options.port ?? 0, host);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
