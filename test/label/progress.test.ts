import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../src/jobs/run-job.js';
import { readLabelInput } from '../../src/label/input.js';
import { runLabelJob } from '../../src/label/job.js';
import { createPolicy } from '../../src/models/policy.js';
import { BIN, startCli } from '../support/cli.js';
import { type Loopback, listenOnLoopback } from '../support/loopback.js';
import { tempDir } from '../support/temp.js';
import { boxedChecker, createFakePolicyModel } from './fake-model.js';

/**
 * Issue 27, item 5: label's bar read `100% | n/n | eta 0s` for the whole run (its total was the
 * solutions read so far), and a hung server showed a silent 0%. Progress now counts prefixes, the
 * unit rollouts are drawn for, against a total a first pass counts before the first request; a
 * job that stops moving says what it waits on.
 */

let dir: string;
beforeAll(() => {
  dir = tempDir('stepwise-progress-');
});

/** A sample file: 6 problems × 3 samples of 2–5 chunks (one line holds several solutions). */
function sampleFile(): { file: string; prefixes: number } {
  let prefixes = 0;
  const rows = Array.from({ length: 6 }, (_, i) => ({
    id: `p${i}`,
    question: `Problem ${i}?`,
    answer: '42',
    samples: Array.from({ length: 3 }, (_, k) => {
      const chunks = 2 + ((i + k) % 4);
      prefixes += chunks;
      return { text: Array.from({ length: chunks }, (_, c) => `step ${c} of ${i}/${k}`).join('\n\n') };
    }),
  }));
  const file = join(dir, 'samples.jsonl');
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return { file, prefixes };
}

describe('label progress', () => {
  it('counts prefixes against a total fixed before the first request, never growing', async () => {
    const { file, prefixes } = sampleFile();
    const model = createFakePolicyModel(() => 0.5);
    const seen: JobProgress[] = [];
    let callsAtFirstReport = -1;
    const summary = await runLabelJob({
      solutions: readLabelInput(file)[Symbol.iterator](),
      plan: readLabelInput(file),
      policy: createPolicy(model),
      checker: boxedChecker,
      out: join(dir, 'labels.jsonl'),
      config: { rollouts: 2, signals: ['abs-q'], concurrency: 2 },
      onProgress: (p) => {
        if (callsAtFirstReport < 0) callsAtFirstReport = model.calls.length;
        seen.push(p);
      },
    });
    expect(summary.solutions).toBe(18);
    expect(callsAtFirstReport).toBe(0);
    expect(seen[0]).toMatchObject({ done: 0, total: prefixes, unit: 'prefixes' });
    expect(seen.every((p) => p.total === prefixes)).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i].done).toBeGreaterThanOrEqual(seen[i - 1].done);
    expect(seen.at(-1)?.done).toBe(prefixes);
    // Not the old picture: most of the run is spent below 100%.
    expect(seen.filter((p) => p.done === p.total)).toHaveLength(1);
  });
});

describe('a hung server', () => {
  let hung: Loopback;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    // Accepts every request and never answers.
    hung = await listenOnLoopback(createServer(() => {}));
  });
  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
    await hung.close();
  });

  it('the progress line says what the job waits on: the server, requests in flight, seconds', async () => {
    const base = `${hung.origin}/v1`;
    const { STEPWISE_QUIET: _quiet, ...env } = process.env;
    child = spawn(
      process.execPath,
      [
        BIN,
        'sample',
        '--dataset',
        'sim',
        '--count',
        '3',
        '--policy',
        'openai:m',
        '--n',
        '1',
        '--base-url',
        base,
        '--timeout-ms',
        '600000',
        '--out',
        join(dir, 'hung.jsonl'),
      ],
      { env: { ...env, STEPWISE_HOME: join(dir, 'home') }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    const waiting = new RegExp(
      `waiting on model server ${base.replace(/[./]/g, '\\$&')} \\(3 requests in flight, \\d+ s\\)`,
    );
    await new Promise<void>((resolve, reject) => {
      child!.stderr!.on('data', (c) => {
        stderr += c;
        if (waiting.test(stderr)) resolve();
      });
      child!.on('exit', () => reject(new Error(`exited before saying it waits: ${stderr}`)));
    });
    expect(stderr).toMatch(waiting);
    // Never "no request in flight" while the server holds one (its GET /v1/models hangs first).
    expect(stderr).not.toMatch(/no model request in flight/);
    // An unknown eta is said so, not cli-progress's padded 'INF' ("eta NFs").
    expect(stderr).not.toMatch(/eta (NF|LL)s/);
    expect(stderr).toMatch(/eta -- /);
    // The run store tells the same: 3 requests in flight, seconds without progress (web Runs page).
    let counts: Record<string, number> = {};
    for (let i = 0; i < 60 && !(counts.inFlight > 0); i++) {
      const runs = await startCli(['runs', '--json', '--limit', '1'], join(dir, 'home')).done;
      counts = (JSON.parse(runs.stdout.trim().split('\n')[0]) as { counts: Record<string, number> }).counts;
      if (!(counts.inFlight > 0)) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(counts).toMatchObject({ done: 0, total: 3, inFlight: 3 });
    expect(counts.waitingSeconds).toBeGreaterThanOrEqual(5);
    process.kill(child.pid!, 'SIGKILL');
  }, 120_000);
});
