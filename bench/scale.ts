/**
 * How `stepwise label` scales: for 1k, 10k and 100k simulated solutions, labeled over HTTP
 * against the simulated world's server at a set latency, the label process's peak RSS, wall
 * time, requests, cache bytes per rollout, and dispatch efficiency (achieved ÷ ideal
 * concurrency). Prints JSON. Everything here is the simulated world: the numbers describe
 * stepwise's client side (memory, cache, dispatch), not any real model's speed.
 *
 *   npx tsx bench/scale.ts [--sizes 1000,10000,100000] [--rollouts 4] [--latency-ms 20]
 *                          [--concurrency 8] [--lookup-entries 10000000]
 *   npx tsx bench/scale.ts --sizes 0 --lookup-entries 10000000   # the cache lookup point only
 *   … --points FILE   also append each finished point to FILE as one JSON line
 *   … --max-seconds S  stop a point's label job (SIGINT) after S seconds and report what it
 *                      reached (`partial`; requests and rollouts counted by the server)
 *
 * Achieved concurrency is Little's law: requests × server latency ÷ wall time (the requests in
 * flight on average); ideal is the label job's request limit (4 × --concurrency). The cache
 * lookup point fills a store with --lookup-entries sample rows (0 skips it) and times lookups
 * of random present keys. Needs a build (`npm run build`): the CLI runs from bin/stepwise.js.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';

const BIN = new URL('../bin/stepwise.js', import.meta.url).pathname;

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Peak RSS of a child, reported by the child itself at exit (resourceUsage is in KiB). */
const RSS_HOOK =
  'data:text/javascript,import fs from "node:fs"; process.on("exit", () => fs.writeSync(2, "\\nSTEPWISE_BENCH_MAXRSS_KB " + process.resourceUsage().maxRSS + "\\n"));';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  maxRssMb: number;
}

async function run(args: string[], env: Record<string, string>, maxSeconds?: number): Promise<Ran> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', RSS_HOOK, BIN, ...args], {
    env: { ...process.env, ...env, STEPWISE_QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Stopped like Ctrl-C when over budget: the job keeps what it finished and reports its peak RSS.
  const budget =
    maxSeconds === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), maxSeconds * 1000);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (budget) clearTimeout(budget);
  const kb = Number(/STEPWISE_BENCH_MAXRSS_KB (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { code, stdout, stderr, seconds: (performance.now() - t0) / 1000, maxRssMb: kb / 1024 };
}

async function startServer(
  latencyMs: number,
): Promise<{ child: ChildProcess; url: string; baseURL: string }> {
  const child = spawn(
    process.execPath,
    [BIN, 'sim', 'serve', '--port', '0', '--latency-ms', String(latencyMs)],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const rl = createInterface({ input: child.stdout! });
  const line = await new Promise<string>((resolve, reject) => {
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sim serve exited with code ${code}`)));
  });
  rl.close();
  const { url, baseURL } = JSON.parse(line) as { url: string; baseURL: string };
  return { child, url, baseURL };
}

/** Requests and samples the sim server answered (its /metrics). */
async function serverCounts(baseURL: string): Promise<{ requests: number; rollouts: number }> {
  const res = await fetch(new URL('/metrics', baseURL));
  const m = (await res.json()) as { requests: number; samples: number };
  return { requests: m.requests, rollouts: m.samples };
}

function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  let n = 0;
  for (const c of readFileSync(path)) if (c === 10) n++;
  return n;
}

function bytes(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

interface Point {
  solutions: number;
  /** Present when the point ran out of --max-seconds and was stopped: what it reached by then. */
  partial?: { labeled: number; note: string };
  peakRssMb: number;
  wallSeconds: number;
  requests: number;
  rollouts: number;
  cacheBytes: number;
  cacheBytesPerRollout: number;
  achievedConcurrency: number;
  idealConcurrency: number;
  dispatchEfficiency: number;
  /** The machine's 1-minute load average at the start and end of the point, and its mean and max (sampled every 5 s). */
  load: { start: number; end: number; mean: number; max: number };
}

async function point(
  dir: string,
  solutions: number,
  o: { rollouts: number; latencyMs: number; concurrency: number; maxSeconds?: number },
): Promise<Point> {
  const input = join(dir, `in-${solutions}.jsonl`);
  const made = await run(
    ['sim', 'dataset', '--processbench', '--count', String(solutions), '--seed', '17', '--out', input],
    {},
  );
  if (made.code !== 0) throw new Error(`sim dataset failed: ${made.stderr}`);
  const server = await startServer(o.latencyMs);
  const loads = [loadavg()[0]];
  const sampler = setInterval(() => loads.push(loadavg()[0]), 5000);
  const home = join(dir, `home-${solutions}`);
  const store = join(home, 'store.sqlite');
  try {
    const r = await run(
      [
        'label',
        '--input',
        input,
        '--policy',
        'openai:sim',
        '--base-url',
        server.baseURL,
        '--rollouts',
        String(o.rollouts),
        '--signals',
        'abs-q',
        '--concurrency',
        String(o.concurrency),
        '--out',
        join(dir, `out-${solutions}.jsonl`),
        '--store',
        store,
        '--json',
      ],
      { STEPWISE_HOME: home },
      o.maxSeconds,
    );
    const stopped = r.code === 130 && o.maxSeconds !== undefined;
    if (r.code !== 0 && !stopped) throw new Error(`label failed (${r.code}): ${r.stderr.slice(-2000)}`);
    // A stopped job prints no summary: the server counts what it answered (requests, samples).
    const summary = stopped
      ? await serverCounts(server.baseURL)
      : (JSON.parse(r.stdout.trim().split('\n').pop()!) as { requests: number; rollouts: number });
    const out = join(dir, `out-${solutions}.jsonl`);
    const cacheBytes = bytes(store) + bytes(`${store}-wal`);
    const ideal = 4 * o.concurrency;
    const achieved = (summary.requests * (o.latencyMs / 1000)) / r.seconds;
    return {
      solutions,
      ...(stopped
        ? {
            partial: {
              labeled: countLines(out),
              note: `stopped after --max-seconds ${o.maxSeconds}: requests and rollouts are the server's counts`,
            },
          }
        : {}),
      peakRssMb: Math.round(r.maxRssMb),
      wallSeconds: Math.round(r.seconds * 10) / 10,
      requests: summary.requests,
      rollouts: summary.rollouts,
      cacheBytes,
      cacheBytesPerRollout: Math.round(cacheBytes / Math.max(1, summary.rollouts)),
      achievedConcurrency: Math.round(achieved * 10) / 10,
      idealConcurrency: ideal,
      dispatchEfficiency: Math.round((achieved / ideal) * 1000) / 1000,
      load: {
        start: loads[0],
        end: loadavg()[0],
        mean: Math.round((loads.reduce((a, b) => a + b, 0) / loads.length) * 100) / 100,
        max: Math.max(...loads, loadavg()[0]),
      },
    };
  } finally {
    clearInterval(sampler);
    server.child.kill();
  }
}

/**
 * Lookup time with `entries` rows in a table shaped like the cache's samples table (16-byte
 * key, a value of 120 bytes, WITHOUT ROWID). The table is filled in key order (an 8-byte
 * counter then 8 random bytes) so that 10^7 rows load in minutes; lookups then go to keys spread
 * over the whole table, and to absent keys.
 */
function lookupPoint(dir: string, entries: number): Record<string, number | string> {
  const file = join(dir, 'lookup.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec(
    'CREATE TABLE samples (key BLOB PRIMARY KEY, n INTEGER NOT NULL, value BLOB NOT NULL) WITHOUT ROWID',
  );
  const insert = db.prepare('INSERT INTO samples (key, n, value) VALUES (?, ?, ?)');
  const value = randomBytes(120);
  const keys: Buffer[] = [];
  const t0 = performance.now();
  const BATCH = 100_000;
  for (let done = 0; done < entries; done += BATCH) {
    const noise = randomBytes(8 * BATCH);
    db.transaction(() => {
      for (let i = 0; i < BATCH && done + i < entries; i++) {
        const k = Buffer.alloc(16);
        k.writeBigUInt64BE(BigInt(done + i), 0);
        noise.copy(k, 8, 8 * i, 8 * i + 8);
        insert.run(k, 4, value);
        if ((done + i) % 499 === 0) keys.push(k);
      }
    })();
  }
  const fillSeconds = (performance.now() - t0) / 1000;
  db.close();
  // Reopen as a store is opened: WAL, a fresh connection and page cache.
  const store = new Database(file);
  store.pragma('journal_mode = WAL');
  const select = store.prepare<[Buffer], { n: number; value: Buffer }>(
    'SELECT n, value FROM samples WHERE key = ?',
  );
  // Visit the sampled keys in a scrambled order so that neighbours are not looked up together.
  const lookups = Math.min(keys.length, 20_000);
  let found = 0;
  const t1 = performance.now();
  for (let i = 0; i < lookups; i++) if (select.get(keys[(i * 7919) % keys.length])) found++;
  const perLookupUs = ((performance.now() - t1) * 1000) / lookups;
  const t2 = performance.now();
  for (let i = 0; i < 2000; i++) select.get(randomBytes(16));
  const missUs = ((performance.now() - t2) * 1000) / 2000;
  store.close();
  return {
    entries,
    fill: 'key order',
    fillSeconds: Math.round(fillSeconds),
    fileBytes: bytes(file),
    lookups,
    found,
    hitMicroseconds: Math.round(perLookupUs * 10) / 10,
    missMicroseconds: Math.round(missUs * 10) / 10,
  };
}

async function main(): Promise<void> {
  if (!existsSync(new URL('../dist/cli/main.js', import.meta.url)))
    throw new Error('dist/ missing: run `npm run build` first');
  const sizes = flag('--sizes', '1000,10000,100000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const o = {
    rollouts: Number(flag('--rollouts', '4')),
    latencyMs: Number(flag('--latency-ms', '20')),
    concurrency: Number(flag('--concurrency', '8')),
    maxSeconds: process.argv.includes('--max-seconds') ? Number(flag('--max-seconds', '0')) : undefined,
  };
  const lookupEntries = Number(flag('--lookup-entries', '10000000'));
  const pointsFile = process.argv.includes('--points') ? flag('--points', '') : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'stepwise-bench-scale-'));
  try {
    const points: Point[] = [];
    for (const n of sizes) {
      points.push(await point(dir, n, o));
      const line = `${JSON.stringify(points[points.length - 1])}\n`;
      process.stderr.write(line);
      // Each finished point is kept at once: a long run stopped later still leaves its points.
      if (pointsFile) appendFileSync(pointsFile, line);
    }
    const lookup = lookupEntries > 0 ? lookupPoint(dir, lookupEntries) : undefined;
    process.stdout.write(
      `${JSON.stringify(
        {
          world: 'simulated',
          note: 'label over HTTP against `stepwise sim serve`; client-side memory, cache and dispatch only',
          settings: { ...o, signals: 'abs-q', search: 'linear' },
          machine: { cores: availableParallelism(), load1: loadavg()[0] },
          points,
          ...(lookup ? { cacheLookup: lookup } : {}),
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
