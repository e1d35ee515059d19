import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordedSearch } from '../../src/cli/search-setup.js';
import { benchChart, benchSearch, parseBenchSpec } from '../../src/search/bench.js';
import { logTicks, niceTicks, renderLineChart } from '../../src/search/chart.js';
import { searchDataset, summarizeSearch } from '../../src/search/dataset.js';
import { openStore } from '../../src/store/db.js';
import { getRun, listRuns } from '../../src/store/runs.js';
import { tempDir } from '../support/temp.js';
import { boxedChecker as checker, fakeJudge, fakePolicy, fakeProblem } from './fakes.js';

const problems = Array.from({ length: 6 }, (_, i) => fakeProblem(`p${i}`, 3 + (i % 3)));

describe('searchDataset', () => {
  it('writes one record per problem, summarises accuracy and cost, and resumes; the command records the run', async () => {
    const dir = tempDir('search-job-');
    const out = join(dir, 'out.jsonl');
    const db = openStore(':memory:');
    const { policy, counters } = fakePolicy({ stepError: 0.2 });
    const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
    const first = await recordedSearch(db, {
      problems,
      strategy: 'chunk-reset',
      deps: { policy, judge, checker },
      out,
    });
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(problems.map((p) => p.id));
    expect(lines[0].trace.length).toBeGreaterThan(0);
    expect(first.summary.problems).toBe(6);
    expect(first.summary.correct).toBe(lines.filter((l) => l.correct).length);
    expect(first.summary.cost.policy.calls).toBe(counters.calls);
    expect(first.summary.costPerProblem.policyCalls).toBeCloseTo(counters.calls / 6, 10);
    const run = getRun(db, first.runId)!;
    expect(run.command).toBe('search');
    expect(run.status).toBe('done');
    expect(run.counts.problems).toBe(6);
    const before = counters.calls;
    // The library alone: it resumes, and reports progress instead of writing the run store.
    const progress: number[] = [];
    let started = 0;
    const again = await searchDataset({
      problems,
      strategy: 'chunk-reset',
      deps: { policy, judge, checker },
      out,
      onStart: () => started++,
      onProgress: (p) => progress.push(p.done),
    });
    expect(counters.calls).toBe(before);
    expect(again.summary.correct).toBe(first.summary.correct);
    expect(again.resumed).toBe(6);
    expect(started).toBe(1);
    expect(progress.at(-1)).toBe(6);
    expect(listRuns(db)).toHaveLength(1);
    // A refused rerun starts no run.
    await expect(
      recordedSearch(db, { problems, strategy: 'best-of-n', deps: { policy, judge, checker }, out }),
    ).rejects.toThrow(/holds results of strategy "chunk-reset".*--fresh/);
    expect(listRuns(db)).toHaveLength(1);
  });

  it('a search that fails mid-way leaves its run failed', async () => {
    const db = openStore(':memory:');
    const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
    const { policy } = fakePolicy({ stepError: 0.2 });
    const broken = { ...policy, continue: () => Promise.reject(new Error('server down')) };
    const out = join(tempDir('search-job-fail-'), 'out.jsonl');
    await expect(
      recordedSearch(db, {
        problems,
        strategy: 'chunk-reset',
        deps: { policy: broken, judge, checker },
        out,
      }),
    ).rejects.toThrow(/server down/);
    const [run] = listRuns(db);
    expect(run.command).toBe('search');
    expect(run.status).toBe('failed');
  });

  it('summarizeSearch: accuracy only over problems with a gold answer', () => {
    const cost = {
      policy: { calls: 2, samples: 2, promptTokens: 10, completionTokens: 5 },
      judge: { calls: 1, samples: 1, promptTokens: 4, completionTokens: 1 },
    };
    const s = summarizeSearch('x', [
      { correct: true, answer: '1', cost },
      { correct: false, answer: null, cost },
      { answer: '2', cost },
    ]);
    expect([s.checked, s.correct, s.accuracy, s.noAnswer]).toEqual([2, 1, 0.5, 1]);
    expect(s.costPerProblem).toEqual({
      policyTokens: 15,
      judgeTokens: 5,
      totalTokens: 20,
      policyCalls: 2,
      judgeCalls: 1,
    });
    expect(s.simulated).toBe(false);
  });
});

describe('bench and chart', () => {
  it('sweeps budgets per strategy and charts accuracy against tokens', async () => {
    const { policy } = fakePolicy({ stepError: 0.2 });
    const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
    const report = await benchSearch({
      problems,
      specs: [parseBenchSpec('best-of-n:1,4'), parseBenchSpec('sample')],
      deps: { policy, judge, checker },
    });
    expect(report.points.map((p) => [p.strategy, p.knob, p.budget])).toEqual([
      ['best-of-n', 'n', 1],
      ['best-of-n', 'n', 4],
      ['sample', undefined, undefined],
    ]);
    expect(report.points[1].costPerProblem.totalTokens).toBeGreaterThan(
      report.points[0].costPerProblem.totalTokens,
    );
    expect(report.simulated).toBe(false);
    const svg = benchChart(report);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('best-of-n (n = 4)');
    expect((svg.match(/<polyline/g) ?? []).length).toBe(1);
    expect(() => parseBenchSpec('best-of-n:0')).toThrow(/positive integers/);
    expect(() => parseBenchSpec('nope:1')).toThrow(/unknown strategy/);
  });

  it('ticks and escaping', () => {
    expect(niceTicks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(logTicks(80, 1200)).toEqual([100, 200, 500, 1000]);
    expect(logTicks(5, 50_000)).toEqual([10, 100, 1000, 10000]);
    const svg = renderLineChart({
      title: 'a < b & c',
      xLabel: 'x',
      yLabel: 'y',
      series: [{ name: '"s"', points: [{ x: 1, y: 0.5 }] }],
    });
    expect(svg).toContain('a &lt; b &amp; c');
    expect(svg).toContain('&quot;s&quot;');
    expect(svg).not.toContain('NaN');
  });
});
