import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, hashString } from '../../src/core/rng.js';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';
import { startScriptedServer } from './policy-server.js';

/**
 * Acceptance 5 through the CLI (`node bin/stepwise.js label`, built into dist/): SIGKILL midway
 * and a rerun give the same output as an uninterrupted run with the same seed, and no rollout is
 * requested twice. The server counts requests: one it answered is a rollout generated; a request
 * it was holding when the client died produced no rollout (its client never saw an answer).
 */

const LABEL_JS = new URL('../../dist/cli/commands/label.js', import.meta.url).pathname;

function rollout(question: string, prefix: string, seed: number | undefined, index: number): string {
  const gold = /what is (\d+) \+ 1\?$/.exec(question)![1];
  const u = createRng(hashString(`${prefix}|${seed}|${index}`)).next();
  const right = !prefix.includes('BAD') && u < 0.6;
  return `Continuing.\n\nThe answer is \\boxed{${right ? Number(gold) + 1 : 0}}.`;
}

let dir: string;
let input: string;
const SOLUTIONS = 10;
beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(LABEL_JS))
    throw new Error('dist/ lacks the label command: run `npm run build` first');
  dir = tempDir('stepwise-label-cli-');
  input = join(dir, 'rows.jsonl');
  const rows = Array.from({ length: SOLUTIONS }, (_, i) => {
    const steps = Array.from({ length: 4 + (i % 3) }, (_, k) =>
      k === 2 && i % 2 ? `BAD step ${k}` : `Step ${k} of ${i}.`,
    );
    return JSON.stringify({
      id: `s${i}`,
      problem: `Problem ${i}: what is ${i} + 1?`,
      answer: String(i + 1),
      steps,
    });
  });
  writeFileSync(input, `${rows.join('\n')}\n`);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function args(url: string, out: string, extra: string[] = []): string[] {
  return [
    'label',
    '--input',
    input,
    '--policy',
    'openai:policy',
    '--base-url',
    url,
    '--rollouts',
    '8',
    '--signals',
    'abs-q,rel-ratio,rel-effective,ms-soft,sorm',
    '--seed',
    '5',
    '--concurrency',
    '2',
    '--out',
    out,
    '--json',
    ...extra,
  ];
}

describe('stepwise label: kill and resume', () => {
  it('SIGKILL midway + rerun = uninterrupted run, and no rollout is requested twice', async () => {
    // Prefixes 0…H−1 per solution (the whole solution is checked, not rolled out from).
    const prefixes = Array.from({ length: SOLUTIONS }, (_, i) => 4 + (i % 3)).reduce((a, b) => a + b, 0);

    // Uninterrupted reference run.
    const ref = await startScriptedServer({ rollout, latencyMs: 10 });
    const refOut = join(dir, 'ref.jsonl');
    try {
      const run = await startCli(args(ref.url, refOut), join(dir, 'home-ref')).done;
      expect(run.stderr).not.toMatch(/unexpected error/);
      expect(run.code).toBe(0);
      expect(ref.answered()).toHaveLength(prefixes);
      const summary = JSON.parse(run.stdout);
      expect(summary.solutions).toBe(SOLUTIONS);
      expect(summary.rollouts).toBe(prefixes * 8);
      expect(summary.signals['abs-q'].share).toBeGreaterThan(0);
      expect(summary.signals['abs-q'].share).toBeLessThan(1);
    } finally {
      await ref.close();
    }

    // Interrupted run: the server stops answering after 40% of the prefixes; the client is
    // killed once everything answered has been received.
    const srv = await startScriptedServer({ rollout, latencyMs: 10, stallAfter: Math.floor(prefixes * 0.4) });
    const out = join(dir, 'killed.jsonl');
    const home = join(dir, 'home-kill');
    try {
      const run = startCli(args(srv.url, out), home);
      await Promise.race([srv.stalled, run.done]);
      await new Promise((r) => setTimeout(r, 600));
      run.child.kill('SIGKILL');
      const killed = await run.done;
      expect(killed.signal).toBe('SIGKILL');
      const partial = readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      expect(partial.length).toBeGreaterThanOrEqual(1);
      expect(partial.length).toBeLessThan(SOLUTIONS);
      const firstAnswered = srv.answered().length;
      const held = srv.requests.filter((r) => r.outcome === 'held');
      expect(held.length).toBeGreaterThan(0);

      srv.resume();
      const rerun = await startCli(args(srv.url, out), home).done;
      expect(rerun.stderr).not.toMatch(/unexpected error/);
      expect(rerun.code).toBe(0);
      expect(JSON.parse(rerun.stdout).resumed).toBe(partial.length);

      expect(readFileSync(out, 'utf8')).toBe(readFileSync(refOut, 'utf8'));
      const answered = srv.answered();
      // Every rollout generated once: answered requests are distinct, and together exactly
      // those of the uninterrupted run.
      expect(new Set(answered.map((r) => r.key)).size).toBe(answered.length);
      expect(answered).toHaveLength(prefixes);
      // Requests repeated by the rerun are only ones the killed run never got an answer to.
      const firstKeys = new Set(
        srv.requests
          .slice(0, firstAnswered + held.length)
          .filter((r) => r.outcome === 'ok')
          .map((r) => r.key),
      );
      for (const r of srv.requests.slice(firstAnswered + held.length))
        expect(firstKeys.has(r.key)).toBe(false);
    } finally {
      await srv.close();
    }
  });

  it('--format processbench writes ProcessBench rows with the chosen signal as label', async () => {
    const srv = await startScriptedServer({
      rollout: (q, prefix) => {
        const gold = Number(/what is (\d+) \+ 1\?$/.exec(q)![1]) + 1;
        return `The answer is \\boxed{${prefix.includes('BAD') ? 0 : gold}}.`;
      },
    });
    const out = join(dir, 'pb.jsonl');
    try {
      const run = await startCli(
        args(srv.url, out, [
          '--format',
          'processbench',
          '--processbench-signal',
          'abs-q',
          '--search',
          'binary',
          '--signals',
          'abs-q',
        ]),
        join(dir, 'home-pb'),
      ).done;
      expect(run.stderr).not.toMatch(/unexpected error/);
      expect(run.code).toBe(0);
      const rows = readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
      expect(rows).toHaveLength(SOLUTIONS);
      for (const [i, r] of rows.entries()) {
        expect(Object.keys(r).sort()).toEqual([
          'final_answer_correct',
          'generator',
          'id',
          'label',
          'problem',
          'steps',
        ]);
        expect(r.generator).toBe('policy');
        // Odd solutions hold a BAD step at index 2, after which every rollout fails.
        if (i % 2) expect(r.label).toBe(2);
      }
      expect(existsSync(`${out}.labels.jsonl`)).toBe(true);
    } finally {
      await srv.close();
    }
  });

  it('bad flags and inputs exit 2 with a message naming the problem', async () => {
    const badInput = join(dir, 'bad.jsonl');
    writeFileSync(badInput, '{"id": "x", "problem": "p", "steps": ["a"]}\n');
    const r1 = await startCli(
      [
        'label',
        '--input',
        badInput,
        '--policy',
        'openai:m',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--out',
        join(dir, 'x.jsonl'),
      ],
      join(dir, 'home-bad'),
    ).done;
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/bad\.jsonl, line 1, field "answer"/);
    expect(r1.stderr).not.toMatch(/\n\s+at /);
    const r2 = await startCli(
      [
        'label',
        '--input',
        input,
        '--policy',
        'openai:m',
        '--signals',
        'abs-q,nope',
        '--out',
        join(dir, 'y.jsonl'),
      ],
      join(dir, 'home-bad'),
    ).done;
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/nope/);
    const r3 = await startCli(
      [...args('http://127.0.0.1:9/v1', join(dir, 'z.jsonl')), '--search', 'binary'],
      join(dir, 'home-bad'),
    ).done;
    expect(r3.code).toBe(2);
    expect(r3.stderr).toMatch(/rel-ratio/);
  });
});
