import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultTinyDir, runDemo, wilson95 } from '../../src/cli/commands/demo.js';
import { openStore } from '../../src/store/db.js';
import { tempDir } from '../support/temp.js';

/** The demo on the tiny real models (a small run: the full one is `npx stepwise demo`). */

const dir = tempDir('stepwise-tiny-demo-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('wilson95', () => {
  it('matches the Wilson score interval', () => {
    const [lo, hi] = wilson95(6, 10);
    expect(lo).toBeCloseTo(0.3127, 4);
    expect(hi).toBeCloseTo(0.8318, 4);
    expect(wilson95(0, 20)[0]).toBe(0);
    expect(wilson95(20, 20)[1]).toBe(1);
  });
});

describe('stepwise demo on the tiny world', () => {
  it('runs the real tiny policy and judge in process and says so; search entries carry ci95', async () => {
    const store = openStore(join(dir, 'store.sqlite'));
    const report = await runDemo({
      outDir: join(dir, 'out'),
      problems: 6,
      samples: 2,
      labelSolutions: 2,
      rollouts: 2,
      processbenchRows: 6,
      bestOfN: 2,
      store,
    });
    store.close();
    expect(report.world).toBe('tiny');
    expect(report.simulated).toBe(false);
    expect(report.notice).toContain(
      'real tiny networks trained on synthetic arithmetic by this project — not results of a large language model',
    );
    expect(report.policy).toBe(`gguf:${join(defaultTinyDir(), 'policy.gguf')}`);
    expect(report.judge).toBe(`generative:gguf:${join(defaultTinyDir(), 'judge.gguf')}`);
    expect(report.sample.problems).toBe(6);
    // The tiny world's ProcessBench rows are the policy's own samples with exact first errors.
    const pb = JSON.parse(readFileSync(join(dir, 'out', 'processbench-tiny.json'), 'utf8'));
    expect(pb).toHaveLength(6);
    expect(pb[0].generator).toMatch(/real tiny network/);
    for (const s of report.search) {
      expect(s.ci95[0]).toBeLessThanOrEqual(s.accuracy);
      expect(s.ci95[1]).toBeGreaterThanOrEqual(s.accuracy);
    }
    // The accuracy-vs-compute curve: several budgets per strategy, every point with its compute
    // (uncached models: a point answered from the cache would cost nothing).
    const budgets = (s: string) =>
      report.accuracyVsCompute.filter((p) => p.strategy === s).map((p) => p.budget);
    expect(budgets('best-of-n')).toEqual([1, 2, 4]);
    expect(budgets('chunk-reset')).toEqual([1, 2, 5]);
    expect(budgets('majority')).toEqual([2, 4]);
    for (const p of report.accuracyVsCompute) expect(p.tokensPerProblem).toBeGreaterThan(0);
    // The tiny policy writes its own <chunk>s: samples, labels and search all run under tags.
    const samples = readFileSync(join(dir, 'out', 'samples.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of samples) {
      expect(r.segmentation).toBe('tags');
      for (const s of r.samples) expect(s.text).toMatch(/^<chunk>/);
    }
    const labels = readFileSync(join(dir, 'out', 'labels.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of labels) expect(r.segmentation).toBe('tags');
    const searched = readFileSync(join(dir, 'out', 'search-chunk-reset.jsonl'), 'utf8')
      .trim()
      .split('\n');
    for (const l of searched) expect(JSON.parse(l).segmentation).toBe('tags');
    const written = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
    expect(written.world).toBe('tiny');
    expect(written.simulated).toBe(false);
  }, 120_000);
});
