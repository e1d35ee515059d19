import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { type FlakyServer, startFlakyServer } from '../support/flaky-server.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 13, acceptance 3: a server that answers every request with n > 1 by HTTP 500 "Only one
 * completion choice is allowed" (older llama.cpp). `label --rollouts 4 --no-cache` finds n = 1 by
 * probing: at most 3 rejected requests, exit 0 well within 60 s.
 */
let dir: string;
let server: FlakyServer;
beforeAll(async () => {
  dir = tempDir('stepwise-n-rejected-');
  const rows = [0, 1, 2, 3].map((i) => ({
    id: `s${i}`,
    problem: `What is ${i} + 3?`,
    answer: String(i + 3),
    steps: [`First, ${i} + 3 = ${i + 3}.`, 'Then we check it.', `The answer is \\boxed{${i + 3}}.`],
  }));
  writeFileSync(join(dir, 'L.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  server = await startFlakyServer({ rate500: 0, rate429: 0, dropRate: 0, delayRate: 0, nativeN: 'error500' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('label against a server that rejects n > 1 with HTTP 500', () => {
  it('exits 0 within 60 s after at most 3 rejected requests', async () => {
    const out = join(dir, 'O.jsonl');
    const t0 = Date.now();
    const run = await startCli(
      [
        'label',
        '--input',
        join(dir, 'L.jsonl'),
        '--policy',
        'openai:m',
        '--base-url',
        server.url,
        '--rollouts',
        '4',
        '--signals',
        'abs-q',
        '--out',
        out,
        '--no-cache',
      ],
      join(dir, 'home'),
    ).done;
    const seconds = (Date.now() - t0) / 1000;
    expect(run.code, run.stderr).toBe(0);
    expect(seconds).toBeLessThan(60);
    const rejected = server.requests.filter((q) => q.outcome === 'n-rejected');
    expect(rejected.length).toBeGreaterThanOrEqual(1);
    expect(rejected.length).toBeLessThanOrEqual(3);
    // Every rollout was still drawn: 4 per prefix, one request each after the probe.
    const ok = server.requests.filter((q) => q.outcome === 'ok' && q.path === '/v1/completions');
    expect(ok.every((q) => q.body.n === undefined)).toBe(true);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(4);
    expect(run.stderr).toMatch(/rejected n = 4 \(HTTP 500: .*Only one completion choice is allowed/);
  });
});
