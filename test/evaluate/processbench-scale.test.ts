import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessBenchRecord } from '../../src/data/types.js';
import { runProcessBench } from '../../src/evaluate/processbench.js';
import type { StepJudge } from '../../src/judge/types.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { type SimServer, startSimServer } from '../../src/sim/server.js';
import { replayBatch } from '../support/batch-replayer.js';
import { BIN, startCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { liveHeapBytes } from '../support/heap.js';

/**
 * Issue 17 for `eval processbench`: predictions stream (appended, scored from disk, never all
 * held), resume by id, `--shard K/N` parts merge into the unsharded predictions, and the judge's
 * requests go through batch files (one round with a threshold, one per chunk with verdicts).
 */

let dir: string;
let server: SimServer;
let deadUrl: string;
let input: string;
let small: string;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing');
  dir = mkdtempSync(join(tmpdir(), 'stepwise-pb-scale-'));
  server = await startSimServer({ readers: PROMPT_READERS, port: 0 });
  deadUrl = `http://127.0.0.1:${await freePort()}/v1`;
  // A ProcessBench-format file of simulated rows; its subset is its name.
  input = join(dir, 'gsm8k.jsonl');
  const r = await startCli(
    ['sim', 'dataset', '--processbench', '--count', '30', '--seed', '8', '--out', input],
    dir,
  ).done;
  if (r.code !== 0) throw new Error(r.stderr);
  mkdirSync(join(dir, 'small'));
  small = join(dir, 'small', 'gsm8k.jsonl');
  writeFileSync(small, `${text(input).split('\n').filter(Boolean).slice(0, 8).join('\n')}\n`);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], home = 'home') {
  return startCli(args, join(dir, home)).done;
}
const text = (f: string) => readFileSync(f, 'utf8');

describe('eval processbench at scale', () => {
  it('does not hold the predictions: live heap grows by far less than the predictions file', async () => {
    // 3,000 samples of 300 steps, every step scored: ~6 MB of predictions.
    const samples: ProcessBenchRecord[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `s${i}`,
      subset: 'gsm8k',
      generator: 'test',
      problem: 'p',
      steps: Array.from({ length: 300 }, () => 's'),
      label: i % 3 === 0 ? -1 : i % 7,
      final_answer_correct: i % 3 === 0,
    }));
    const judge: StepJudge = {
      name: 'scores',
      scalar: true,
      async judge(_p, chunks) {
        const judgments = chunks.map((_, k) => ({
          index: k,
          verdict: 'positive' as const,
          score: ((k * 7919) % 1000) / 1000,
        }));
        return {
          judgments,
          firstError: -1,
          formatFailures: 0,
          cost: {
            policy: { calls: 0, samples: 0, promptTokens: 0, completionTokens: 0 },
            judge: { calls: 1, samples: 1, promptTokens: 1, completionTokens: 1 },
          },
        } as unknown as Awaited<ReturnType<StepJudge['judge']>>;
      },
    };
    const path = join(dir, 'heap.predictions.jsonl');
    const before = liveHeapBytes();
    const report = await runProcessBench({
      judge,
      samples,
      predictionsPath: path,
      threshold: { mode: 'fixed', value: 0.5 },
    });
    const grown = liveHeapBytes() - before;
    expect(report.samples).toBe(3000);
    expect(statSync(path).size).toBeGreaterThan(5e6);
    expect(grown).toBeLessThan(statSync(path).size / 4);
  }, 120_000);

  it('three shards merged equal one unsharded run, line for line; the merged file scores the same', async () => {
    const common = ['eval', 'processbench', '--judge', 'sim:generative', '--path', input];
    const full = await cli([...common, '--out', join(dir, 'full.json')]);
    expect(full.code, full.stderr).toBe(0);
    const parts: string[] = [];
    for (let k = 1; k <= 3; k++) {
      const r = await cli([...common, '--shard', `${k}/3`, '--out', join(dir, `part${k}.json`)]);
      expect(r.code, r.stderr).toBe(0);
      const n = text(join(dir, `part${k}.predictions.jsonl`))
        .split('\n')
        .filter(Boolean).length;
      expect(n).toBeGreaterThan(2);
      expect(n).toBeLessThan(25);
      parts.push(join(dir, `part${k}.predictions.jsonl`));
    }
    const merged = join(dir, 'merged.predictions.jsonl');
    const m = await cli(['merge', ...parts, '--input', input, '--out', merged, '--json']);
    expect(JSON.parse(m.stdout)).toMatchObject({ records: 30, duplicates: 0, missing: 0 });
    expect(text(merged)).toBe(text(join(dir, 'full.predictions.jsonl')));
    const scored = await cli(['eval', 'processbench', '--predictions', merged, '--path', input, '--json']);
    const report = JSON.parse(text(join(dir, 'full.json')));
    expect(JSON.parse(scored.stdout).average_f1).toBeCloseTo(report.average_f1, 9);
    // A part resumed as another part is refused; auto thresholds are not chosen on a part.
    const wrong = await cli([...common, '--shard', '1/3', '--out', join(dir, 'part2.json')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/not in --shard 1\/3/);
    const auto = await cli([
      'eval',
      'processbench',
      '--judge',
      'prm:sim',
      '--path',
      input,
      '--shard',
      '1/2',
      '--out',
      join(dir, 'a.json'),
    ]);
    expect(auto.code).toBe(2);
    expect(auto.stderr).toMatch(/--threshold auto .* sees only part of it/);
  }, 300_000);

  it('stopped midway and resumed: no id written twice, same predictions as a run in one go', async () => {
    const common = [
      'eval',
      'processbench',
      '--judge',
      'sim:generative',
      '--path',
      input,
      '--concurrency',
      '2',
    ];
    const out = join(dir, 'stop.json');
    const child = startCli([...common, '--out', out], join(dir, 'home'));
    const preds = join(dir, 'stop.predictions.jsonl');
    const lines = () => (existsSync(preds) ? text(preds).split('\n').filter(Boolean).length : 0);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (lines() >= 3) {
          clearInterval(t);
          child.child.kill('SIGINT');
          resolve();
        }
      }, 20);
    });
    await child.done;
    const kept = lines();
    const again = await cli([...common, '--out', out]);
    expect(again.code, again.stderr).toBe(0);
    const ids = text(preds)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).id as string);
    expect(ids.length).toBe(30);
    expect(new Set(ids).size).toBe(30);
    expect(kept).toBeGreaterThan(0);
    expect(text(preds)).toBe(text(join(dir, 'full.predictions.jsonl')));
  }, 300_000);

  for (const [mode, judgeSpec] of [
    ['a critic: one request a sample, one round', 'critic:openai:sim'],
    ['generative verdicts: one round per chunk', 'generative:openai:sim?sensitivity=0.9&specificity=0.9'],
  ] as const) {
    it(`--batch-out / --batch-in with ${mode}, ending equal to the online run`, async () => {
      const common = ['eval', 'processbench', '--judge', judgeSpec, '--path', small];
      const tag = judgeSpec.startsWith('critic') ? 'c' : 'g';
      const online = await cli(
        [...common, '--base-url', server.baseURL, '--out', join(dir, `${tag}-online.json`)],
        `${tag}-online`,
      );
      expect(online.code, online.stderr).toBe(0);
      server.resetMetrics();
      let batchIn: string[] = [];
      let rounds = 0;
      for (;;) {
        rounds++;
        const req = join(dir, `${tag}-req.round${rounds}.jsonl`);
        const r = await cli(
          [
            ...common,
            '--base-url',
            deadUrl,
            ...batchIn,
            '--batch-out',
            req,
            '--out',
            join(dir, `${tag}-batch.json`),
          ],
          `${tag}-batch`,
        );
        expect(r.code, r.stderr).toBe(0);
        if (!existsSync(req) || text(req) === '') break;
        expect(r.stderr).toMatch(/vllm run-batch/);
        expect(rounds).toBeLessThan(20);
        const res = join(dir, `${tag}-res.round${rounds}.jsonl`);
        await replayBatch(server.url, req, res);
        batchIn = ['--batch-in', res];
      }
      // The last round writes nothing: a critic needs one round of requests, verdicts several.
      if (tag === 'c') expect(rounds).toBe(2);
      else expect(rounds).toBeGreaterThan(2);
      const a = JSON.parse(text(join(dir, `${tag}-online.json`)));
      const b = JSON.parse(text(join(dir, `${tag}-batch.json`)));
      expect(b.subsets).toEqual(a.subsets);
      const preds = (f: string) =>
        text(f)
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            const { id, prediction, scores } = JSON.parse(l);
            return { id, prediction, scores };
          });
      expect(preds(join(dir, `${tag}-batch.predictions.jsonl`))).toEqual(
        preds(join(dir, `${tag}-online.predictions.jsonl`)),
      );
    }, 400_000);
  }
});
