import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProblems } from '../../src/data/load.js';
import { BIN, startCli } from '../support/cli.js';
import { startFlakyServer } from '../support/flaky-server.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const GSM8K = sharedData('gsm8k/test.jsonl');

function lines(
  file: string,
): Array<{ id: string; samples: Array<{ text: string; answer: string | null; correct: boolean }> }> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

function sampleArgs(url: string, out: string, limit: number, extra: string[] = []): string[] {
  return [
    'sample',
    '--dataset',
    'gsm8k',
    '--path',
    GSM8K,
    '--limit',
    String(limit),
    '--policy',
    'openai:m',
    '--base-url',
    url,
    '--n',
    '4',
    '--out',
    out,
    '--json',
    ...extra,
  ];
}

describe('stepwise sample against a flaky OpenAI-compatible server', () => {
  let dir: string;
  let goldByQuestion: Map<string, string>;
  let idByQuestion: Map<string, string>;

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-sample-');
    const { problems } = await loadProblems('gsm8k', { path: GSM8K, limit: 30 });
    goldByQuestion = new Map(problems.map((p) => [p.question, p.answer]));
    idByQuestion = new Map(problems.map((p) => [p.question, p.id]));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes 30 problems × 4 samples through 500s, 429s, drops and delays; a rerun sends no request', async () => {
    // The acceptance server: 20% HTTP 500, 10% 429 + Retry-After: 1, 5% dropped, 5% delayed 5 s.
    const server = await startFlakyServer({
      seed: 2,
      answerFor: (q) => goldByQuestion.get(q),
      correctRate: 0.5,
    });
    const home = join(dir, 'home-a');
    const out = join(dir, 'a.jsonl');
    try {
      const first = await startCli(sampleArgs(server.url, out, 30), home).done;
      expect(first.stderr).not.toMatch(/unexpected error/);
      expect(first.code).toBe(0);
      const recs = lines(out);
      expect(recs).toHaveLength(30);
      expect(new Set(recs.map((r) => r.id)).size).toBe(30);
      for (const r of recs) expect(r.samples).toHaveLength(4);
      const outcomes = new Set(server.requests.map((r) => r.outcome));
      // The faults really happened (seed 2 draws every kind within the first 30 requests).
      for (const o of ['500', '429', 'drop', 'delay', 'ok']) expect(outcomes).toContain(o);
      const summary = JSON.parse(first.stdout);
      expect(summary.problems).toBe(30);
      // The readable summary goes to stderr, in the one format every job uses.
      expect(first.stderr).toMatch(/^sample: 30 problems × 4 samples/m);
      expect(first.stderr).toMatch(/^ {2}accuracy +\d+\.\d% \(\d+ of 120\) of samples correct; pass@1 /m);
      expect(first.stderr).toMatch(/^ {2}wrote +\/\S+\/a\.jsonl \(run \S+\)$/m);
      expect(summary.samples).toBe(120);
      // Half the samples carry the gold answer: the checker must see that.
      expect(summary.accuracy).toBeGreaterThan(0.3);
      expect(summary.accuracy).toBeLessThan(0.7);
      const correct = recs.flatMap((r) => r.samples).filter((s) => s.correct).length;
      expect(summary.accuracy).toBeCloseTo(correct / 120, 10);
      expect(summary.requests.retries).toBeGreaterThan(0);

      // Model calls: the one `GET /v1/models` a run makes (the cache key holds what the server
      // says it serves) is not a model call.
      const calls = () => server.requests.filter((r) => r.path !== '/v1/models').length;
      const before = calls();
      const again = await startCli(sampleArgs(server.url, out, 30), home).done;
      expect(again.code).toBe(0);
      expect(calls()).toBe(before);
      expect(lines(out)).toEqual(recs);

      // A fresh output file with the same store: every response comes from the cache.
      const out2 = join(dir, 'a2.jsonl');
      const cachedRun = await startCli(sampleArgs(server.url, out2, 30), home).done;
      expect(cachedRun.code).toBe(0);
      expect(calls()).toBe(before);
      expect(lines(out2).map((r) => r.samples)).toEqual(recs.map((r) => r.samples));
      expect(JSON.parse(cachedRun.stdout).cachedProblems).toBe(30);
    } finally {
      await server.close();
    }
  });

  it('after SIGKILL midway a rerun completes the file and requests no problem already written', async () => {
    const server = await startFlakyServer({
      seed: 3,
      rate500: 0,
      rate429: 0,
      dropRate: 0,
      delayRate: 0,
      latencyMs: 150,
      answerFor: (q) => goldByQuestion.get(q),
    });
    const home = join(dir, 'home-b');
    const out = join(dir, 'b.jsonl');
    try {
      const run = startCli(sampleArgs(server.url, out, 30, ['--concurrency', '2']), home);
      // Kill once some problems are written but well before the end.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        if (existsSync(out) && lines(out).length >= 6) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      run.child.kill('SIGKILL');
      const killed = await run.done;
      expect(killed.signal).toBe('SIGKILL');
      const written = new Set(
        readFileSync(out, 'utf8')
          .split('\n')
          .filter((l) => l.endsWith('}'))
          .map((l) => JSON.parse(l).id),
      );
      expect(written.size).toBeGreaterThanOrEqual(6);
      expect(written.size).toBeLessThan(30);
      const requestsBefore = server.requests.length;

      const rerun = await startCli(sampleArgs(server.url, out, 30, ['--concurrency', '2']), home).done;
      expect(rerun.code).toBe(0);
      const recs = lines(out);
      expect(recs).toHaveLength(30);
      expect(new Set(recs.map((r) => r.id)).size).toBe(30);
      for (const r of recs) expect(r.samples).toHaveLength(4);
      const requested = server.requests
        .slice(requestsBefore)
        .filter((r) => r.path !== '/v1/models')
        .map((r) => idByQuestion.get(r.question ?? ''));
      expect(requested.length).toBeGreaterThan(0);
      for (const id of requested) expect(written.has(id)).toBe(false);
      // Exactly the unwritten problems were requested, at most once each, minus any whose
      // response reached the cache before the kill.
      expect(new Set(requested).size).toBe(requested.length);
      expect(requested.length).toBeLessThanOrEqual(30 - written.size);
    } finally {
      await server.close();
    }
  });
});
