/**
 * The worst inputs found for each server command, timed against the real servers (the built CLI,
 * each in its own process), as JSON: per input, the answer's status and time, and the slowest
 * `/health` answer while it was in flight (probed every 50 ms from this process). What the
 * servers promise (issue #32): health within 1 s whatever is in flight; every computation linear
 * in its input; limits that refuse (400/413) what would take long.
 *
 *   npm run build && npx tsx bench/servers.ts [--only rewards|sim|web] > servers.json
 *
 * Inputs (found by trying: the quadratic cases of the old code, the largest legal requests, the
 * regexes' and parsers' bad cases):
 * - rewards: prompts that nearly match every position of their query (old `lastIndexOf`: 21 s),
 *   a verdict followed by 400k spaces, the most items, the longest labels and answers, items over
 *   the per-item limit;
 * - sim: a 20,000-operation question (old: minutes), 1,000-operation questions with n = 2048 (past
 *   the reply cap) and n = 8, a judge prompt with a 1 MB history, 4,096 pooling inputs, 1 MB chat;
 * - web: 1 MB to segment, 100 KB answers to verify, a 60 MB JSONL file's last page, its summary,
 *   the listing of a folder with 1,000 files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderJudgeMessages, renderPolicyPrompt, renderQwenPrmInput } from '../src/prompts/index.js';
import { generateSimProblems } from '../src/sim/index.js';
import { DEFAULT_SIM_OPTIONS } from '../src/sim/options.js';
import { sampleSimSolution } from '../src/sim/policy.js';

const BIN = new URL('../bin/stepwise.js', import.meta.url).pathname;
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const home = mkdtempSync(join(tmpdir(), 'stepwise-bench-servers-'));

interface Started {
  url: string;
  child: ChildProcess;
}

async function start(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [BIN, ...args, '--port', '0'], {
    env: { ...process.env, STEPWISE_HOME: home, STEPWISE_QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const look = (d: Buffer) => {
      out += String(d);
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve(m[0]);
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.on('exit', (code) => reject(new Error(`stepwise ${args.join(' ')} exited ${code}: ${out}`)));
  });
  return { url, child };
}

async function stop(s: Started): Promise<number> {
  const t = performance.now();
  const exited = new Promise((r) => s.child.once('exit', r));
  process.kill(s.child.pid as number, 'SIGTERM');
  await exited;
  return Math.round(performance.now() - t);
}

interface Case {
  name: string;
  method?: string;
  path: string;
  body?: string;
}

interface Timed {
  name: string;
  status: number;
  ms: number;
  requestBytes: number;
  replyBytes: number;
  slowestHealthMs: number;
  /** Health probes that failed (connection refused or reset). */
  healthErrors: number;
  error?: string;
}

async function time(base: string, health: string, c: Case): Promise<Timed> {
  // Encoded before the clock starts: encoding megabytes would hold this process and its probes.
  const body = c.body === undefined ? undefined : Buffer.from(c.body);
  let done = false;
  let slowest = 0;
  let healthErrors = 0;
  const probe = (async () => {
    await new Promise((r) => setTimeout(r, 20));
    while (!done) {
      const t = performance.now();
      await fetch(base + health, { headers: { connection: 'close' } })
        .then((r) => r.arrayBuffer())
        .catch(() => healthErrors++);
      slowest = Math.max(slowest, performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const t = performance.now();
  let status = 0;
  let replyBytes = 0;
  let error: string | undefined;
  try {
    const res = await fetch(base + c.path, {
      method: c.method ?? (c.body === undefined ? 'GET' : 'POST'),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body,
    });
    status = res.status;
    replyBytes = (await res.arrayBuffer()).byteLength;
  } catch (e) {
    error = String((e as Error).cause ?? e);
  }
  const ms = performance.now() - t;
  done = true;
  await probe;
  return {
    name: c.name,
    status,
    ms: Math.round(ms),
    requestBytes: c.body?.length ?? 0,
    replyBytes,
    slowestHealthMs: Math.round(slowest),
    healthErrors,
    ...(error ? { error } : {}),
  };
}

const rewardBody = (query: string[], prompts: string[], labels: string[]) =>
  JSON.stringify({ query, prompts, labels });
const fill = <T>(n: number, v: T): T[] => Array.from({ length: n }, () => v);

function rewardCases(): Case[] {
  const q = 'a'.repeat(440_000);
  const p = `${'a'.repeat(220_000)}b`;
  const nested = `${'{'.repeat(4999)}1${'}'.repeat(4999)}`;
  return [
    {
      name: 'quadratic prompt search: 16 items of 440 KB',
      path: '/get_reward',
      body: rewardBody(fill(16, q), fill(16, p), fill(16, 'positive')),
    },
    {
      name: 'verdict then 400k spaces, no brace',
      path: '/get_reward',
      body: rewardBody(
        fill(16, `\\boxed{positive${' '.repeat(400_000)}`),
        fill(16, ''),
        fill(16, 'positive'),
      ),
    },
    {
      name: '4096 items of 4 KB',
      path: '/get_reward',
      body: rewardBody(
        fill(4096, `${'We compute. '.repeat(340)}\\boxed{positive}`),
        fill(4096, ''),
        fill(4096, 'positive'),
      ),
    },
    {
      name: 'item over the per-item limit (600 KB)',
      path: '/get_reward',
      body: rewardBody(['x'.repeat(600_000)], [''], ['positive']),
    },
  ].concat(
    [
      {
        name: 'outcome: 64 answers of nested braces and 10,000-character labels',
        path: '/get_reward',
        body: rewardBody(fill(64, `so \\boxed{${nested}}`), fill(64, ''), fill(64, nested)),
      },
    ].map((c) => ({ ...c, name: `[outcome] ${c.name}` })),
  );
}

function simQuestion(ops: number): string {
  const phrases = Array.from({ length: ops }, (_, i) => (i === 0 ? 'Add 2' : 'add 2'));
  return `Start with 3. ${phrases.join(', then ')}. What is the final number?`;
}

function simCases(): Case[] {
  const completion = (prompt: string | string[], n: number) => JSON.stringify({ model: 'sim', prompt, n });
  const [problem] = generateSimProblems({ count: 1, seed: 3, minSteps: 40, maxSteps: 40 });
  const solution = sampleSimSolution(problem.question, DEFAULT_SIM_OPTIONS, 1);
  const history = Array.from({ length: 20_000 }, (_, i) => solution[i % (solution.length - 1)]);
  const judge = renderJudgeMessages({
    problem: problem.question,
    history: history.slice(0, 8_000),
    chunk: solution[0],
  });
  const judgeChars = judge.reduce((a, m) => a + m.content.length, 0);
  const pool = renderQwenPrmInput(problem.question, solution);
  return [
    {
      name: '20,000-operation question',
      path: '/v1/completions',
      body: completion(renderPolicyPrompt(simQuestion(20_000), ''), 1),
    },
    {
      name: '1,000-operation question, n = 2048 (past the reply cap)',
      path: '/v1/completions',
      body: completion(renderPolicyPrompt(simQuestion(1000), ''), 2048),
    },
    {
      name: '1,000-operation question, n = 8',
      path: '/v1/completions',
      body: completion(renderPolicyPrompt(simQuestion(1000), ''), 8),
    },
    {
      name: '40-operation questions, 4 prompts × n = 2048',
      path: '/v1/completions',
      body: completion(fill(4, renderPolicyPrompt(problem.question, '')), 2048),
    },
    {
      name: `judge prompt with a ${Math.round(judgeChars / 1000)} KB history, n = 64`,
      path: '/v1/chat/completions',
      body: JSON.stringify({ model: 'sim', messages: judge, n: 64 }),
    },
    {
      name: '4096 pooling inputs of 40 steps',
      path: '/pooling',
      body: JSON.stringify({ model: 'sim', input: fill(4096, pool) }),
    },
    {
      name: '1 MB chat message',
      path: '/v1/chat/completions',
      body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'x'.repeat(1_000_000) }] }),
    },
  ];
}

function webCases(dir: string): Case[] {
  mkdirSync(join(dir, 'many'), { recursive: true });
  for (let i = 0; i < 1000; i++)
    writeFileSync(join(dir, 'many', `f${i}.json`), JSON.stringify({ i, text: 'x'.repeat(2000) }));
  const row = JSON.stringify({
    id: 'a',
    problem: 'P',
    chunks: fill(20, { text: 'y'.repeat(100), q: 0.5, labels: { 'abs-q': true } }),
    firstError: { 'abs-q': -1 },
  });
  const rows = Math.floor(60_000_000 / (row.length + 1));
  writeFileSync(join(dir, 'big.jsonl'), `${fill(rows, row).join('\n')}\n`);
  return [
    { name: 'segment 1 MB', path: '/api/segment', body: JSON.stringify({ text: 'Step. '.repeat(166_000) }) },
    {
      name: 'verify 100 KB answers',
      path: '/api/verify',
      body: JSON.stringify({
        gold: `${'('.repeat(50_000)}1${')'.repeat(49_999)}`,
        pred: '1'.repeat(100_000),
      }),
    },
    {
      name: `last page of a 60 MB JSONL file (${rows} rows)`,
      path: `/api/file?root=0&path=big.jsonl&offset=${rows - 100}`,
    },
    { name: 'summary of the 60 MB JSONL file', path: '/api/summary?root=0&path=big.jsonl' },
    { name: 'listing 1,000 files', path: '/api/files' },
  ];
}

const results: Record<string, unknown> = {};
try {
  if (!only || only === 'rewards') {
    const cases = rewardCases();
    const agreement = await start(['serve', 'rewards', '--kind', 'judge-agreement']);
    const outcome = await start(['serve', 'rewards', '--kind', 'outcome']);
    const timed: Timed[] = [];
    for (const c of cases)
      timed.push(await time(c.name.startsWith('[outcome]') ? outcome.url : agreement.url, '/health', c));
    // SIGTERM while the worst input is in flight.
    const worst = cases[0];
    const inFlight = [0, 1, 2].map(() =>
      fetch(agreement.url + worst.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: worst.body,
      }).catch(() => null),
    );
    await new Promise((r) => setTimeout(r, 300));
    results.rewards = { cases: timed, sigtermWhileBusyMs: await stop(agreement) };
    await Promise.all(inFlight);
    await stop(outcome);
  }
  if (!only || only === 'sim') {
    const cases = simCases();
    const sim = await start(['sim', 'serve']);
    const timed: Timed[] = [];
    for (const c of cases) timed.push(await time(sim.url, '/health', c));
    const inFlight = [cases[1], cases[3]].map((c) =>
      fetch(sim.url + c.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: c.body,
      }).catch(() => null),
    );
    await new Promise((r) => setTimeout(r, 300));
    results.sim = { cases: timed, sigtermWhileBusyMs: await stop(sim) };
    await Promise.all(inFlight);
  }
  if (!only || only === 'web') {
    const dir = join(home, 'web');
    const cases = webCases(dir);
    const web = await start(['serve', '--dir', dir]);
    const timed: Timed[] = [];
    for (const c of cases) timed.push(await time(web.url, '/api/health', c));
    results.web = { cases: timed, sigtermMs: await stop(web) };
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.stdout.write(
  `${JSON.stringify({ world: 'real servers on loopback (no model)', results }, null, 2)}\n`,
);
