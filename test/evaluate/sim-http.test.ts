import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedStepJudgeMetrics } from '../../src/evaluate/metrics.js';
import { loadProcessBenchSamples, runProcessBench } from '../../src/evaluate/processbench.js';
import { createJudge } from '../../src/judge/create.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { expectedProcessBenchScores, simProcessBenchRows } from '../../src/sim/dataset.js';
import { type SimServer, startSimServer } from '../../src/sim/server.js';
import { providers } from '../support/providers.js';
import { tempDir } from '../support/temp.js';

let dir: string;
let server: SimServer;

beforeAll(async () => {
  dir = tempDir('stepwise-pb-sim-');
  server = await startSimServer({ readers: PROMPT_READERS, port: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ProcessBench over HTTP against the sim server (acceptance 2)', () => {
  it('F1 of a sim stepwise judge is within 3 points of the value computed from its rates, with early exit', async () => {
    const sensitivity = 0.85;
    const specificity = 0.93;
    // 1,000 sim solutions in ProcessBench format, about half with a true first error.
    const rows = simProcessBenchRows({ count: 1000, errorShare: 0.5 }, { seed: 11, stepError: 0.12 });
    const file = join(dir, 'simset.json');
    writeFileSync(file, JSON.stringify(rows));
    const samples = await loadProcessBenchSamples({ path: file });
    expect(samples).toHaveLength(1000);

    const judge = await createJudge(
      // Constant rates (judge_difficulty=0): the metric pipeline is checked against the closed form.
      `generative:openai:sim?sensitivity=${sensitivity}&specificity=${specificity}&judge_difficulty=0`,
      { providers, noCache: true, settings: { baseUrl: server.baseURL, maxRetries: 0 } },
    );
    expect(judge.simulated).toBe(true);
    server.resetMetrics();
    const report = await runProcessBench({
      judge,
      samples,
      predictionsPath: join(dir, 'sim.predictions.jsonl'),
      threshold: { mode: 'verdict' },
      concurrency: 32,
    });
    const expected = expectedStepJudgeMetrics(
      samples.map((s) => ({ label: s.label, steps: s.steps.length })),
      { sensitivity, specificity },
    );
    // The sim engineer's independent derivation of the same formula agrees with ours.
    expect(expectedProcessBenchScores(rows, { sensitivity, specificity, judgeDifficulty: 0 }).f1).toBeCloseTo(
      expected.f1,
      9,
    );
    const m = report.subsets.simset;
    // Printed so docs/processbench.md can quote the numbers (simulated world).
    console.log(`sim judge F1: ${m.f1?.toFixed(1)} measured vs ${expected.f1.toFixed(1)} expected`);
    expect(m.n).toBe(1000);
    expect(Math.abs(m.f1! - expected.f1)).toBeLessThan(3);
    expect(Math.abs(m.error_acc! - expected.error_acc)).toBeLessThan(5);
    expect(Math.abs(m.correct_acc! - expected.correct_acc)).toBeLessThan(5);
    expect(report.simulated).toBe(true);
    expect(report.notice).toMatch(/SIMULATED/);

    // Early exit: the server saw exactly one judge request per chunk up to and including the
    // predicted first error (all chunks when none was predicted), and nothing after it.
    const judged = report.cost.judge.calls;
    const { lines } = await import('../../src/jobs/jsonl.js').then((j) =>
      j.readJsonl(join(dir, 'sim.predictions.jsonl')),
    );
    // Every prediction line says simulated, those written before a reply showed it too (issue 27, item 6).
    expect(lines.every((l) => (l.value as { simulated?: boolean }).simulated === true)).toBe(true);
    const wanted = lines.reduce((s, l) => {
      const r = l.value as { prediction: number; steps: number };
      return s + (r.prediction === -1 ? r.steps : r.prediction + 1);
    }, 0);
    expect(judged).toBe(wanted);
    expect(server.metrics().byRole.judge?.requests).toBe(wanted);
    expect(wanted).toBeLessThan(samples.reduce((s, x) => s + x.steps.length, 0));
  });
});
