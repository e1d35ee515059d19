import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import pLimit from 'p-limit';
import { UsageError } from '../core/errors.js';
import { wilson95 } from '../core/interval.js';
import type { Segmentation } from '../core/segment.js';
import type { Problem } from '../core/types.js';
import { MADE_FROM_FIELD, madeFromDigest, recordedMadeFrom } from '../jobs/made-from.js';
import { assertSameSettings, type JobSettings, withSettings } from '../jobs/settings.js';
import { worldOfJudge } from '../judge/common.js';
import { renderLineChart } from './chart.js';
import { type CostPerProblem, type SearchSummary, summarizeSearch, toSearchRecord } from './dataset.js';
import { outcomeString, outcomesOf, type PairedDifference, pairedDifference } from './paired.js';
import { SolutionPools } from './pool.js';
import type { SearchConfig } from './registry.js';
import { getStrategy, runStrategy } from './registry.js';
import type { SearchDeps } from './types.js';

/** One strategy and the values of its budget knob to sweep (see `STRATEGIES[name].budget`). */
export interface BenchSpec {
  strategy: string;
  budgets: number[];
}

/** One (strategy, budget) point: accuracy and cost per problem. */
export interface BenchPoint {
  strategy: string;
  /** The setting the budget sets (`n`, `maxAttempts`, `childrenPerNode`), absent for fixed-cost strategies. */
  knob?: string;
  budget?: number;
  accuracy: number;
  correct: number;
  checked: number;
  costPerProblem: CostPerProblem;
  /** With a judge: the share of its replies with no parsable verdict (and their counts). */
  formatFailures?: number;
  judgeReplies?: number;
  formatFailureRate?: number;
  /** Per problem, in the problems' order: `1` correct, `0` wrong, `-` not checked (what pairing reads). */
  outcomes?: string;
  /** Against plain sampling on the same problems: mean per-problem difference and its 95% interval. */
  paired?: PairedDifference;
}

/** Strategies that read their candidates from one pool of whole solutions per problem (src/search/pool.ts). */
export const POOLED_STRATEGIES: readonly string[] = ['sample', 'majority', 'best-of-n', 'weighted-vote'];

/**
 * What the pooled points of a sweep cost together: N_max samples per problem (each drawn once)
 * and each judged once, not the sum of the points' costs (each point's `costPerProblem` is what its
 * first n candidates cost, i.e. what it would cost on its own).
 */
export interface PoolCost {
  strategies: string[];
  /** The largest n among the pooled points: the pool's size per problem. */
  nMax: number;
  samplesPerProblem: number;
  costPerProblem: CostPerProblem;
}

/** What `stepwise bench search` writes as JSON. */
export interface BenchReport {
  /** True when the problems are simulated: the numbers describe the simulated world, not a real model. */
  simulated: boolean;
  /** Present and true when the judge read the gold answer (`--allow-gold-judge`). */
  judgeUsedGold?: true;
  note: string;
  problems: number;
  policy?: string;
  judge?: string;
  /** How the policy segmented its solutions (`--segmentation`; absent: paragraph). */
  segmentation?: Segmentation;
  config: Partial<SearchConfig>;
  points: BenchPoint[];
  /** The pooled points' shared cost (absent when the sweep has none). */
  pool?: PoolCost;
  seconds: number;
}

/** The default sweep: baselines and every judged strategy at a few budgets. */
export const DEFAULT_BENCH_SPECS: readonly BenchSpec[] = [
  { strategy: 'sample', budgets: [1] },
  { strategy: 'majority', budgets: [1, 4, 16] },
  { strategy: 'best-of-n', budgets: [1, 4, 16] },
  { strategy: 'weighted-vote', budgets: [4, 16] },
  { strategy: 'beam', budgets: [4, 16] },
  { strategy: 'greedy-prm', budgets: [1, 3, 5] },
  { strategy: 'chunk-reset', budgets: [1, 2, 5] },
];

/** The specs with plain sampling first when they lack it: every point is paired against it. */
export function withBaselineSpec(specs: readonly BenchSpec[]): BenchSpec[] {
  return specs.some((sp) => sp.strategy === 'sample')
    ? [...specs]
    : [{ strategy: 'sample', budgets: [] }, ...specs];
}

/** Parse `best-of-n:1,4,16` (or a bare strategy name, one point at the default budget). */
export function parseBenchSpec(text: string): BenchSpec {
  const [name, list] = text.split(':');
  getStrategy(name.trim());
  if (list === undefined || list.trim() === '') return { strategy: name.trim(), budgets: [] };
  const budgets = list.split(',').map((s) => Number(s.trim()));
  if (budgets.some((b) => !Number.isInteger(b) || b < 1))
    throw new UsageError(`bench spec "${text}": budgets must be positive integers, e.g. best-of-n:1,4,16`);
  return { strategy: name.trim(), budgets };
}

export interface BenchOptions {
  problems: readonly Problem[];
  specs?: readonly BenchSpec[];
  config?: Partial<SearchConfig>;
  deps: SearchDeps;
  /** Problems searched at once. Default 4. */
  concurrency?: number;
  policy?: string;
  judge?: string;
  onPoint?: (point: BenchPoint, index: number, total: number) => void;
  /** The models are simulated (sim policy or judge), whatever the problems' source. */
  simulated?: boolean;
  /**
   * JSONL where each finished point is appended at once (with `settings`): a rerun takes the
   * points already there instead of computing them again, so an interrupted sweep resumes.
   */
  pointsFile?: string;
  /** Recorded on every point; a resumed points file must have the same (see jobs/settings). */
  settings?: JobSettings;
  /** Ignore (and overwrite) an existing points file. */
  fresh?: boolean;
  /** Called with the number of points taken from the points file. */
  onResume?: (points: number) => void;
  /** Exit 2 instead of redoing points made from other problems (jobs/made-from). */
  strictResume?: boolean;
  /** Told of points kept unverified (an older points file that records no digest of its problems). */
  onWarning?: (message: string) => void;
  /** Called with the number of points redone because the problems changed since they were made. */
  onRedone?: (points: number) => void;
  /**
   * Add plain sampling when the specs lack it, so every point has its paired difference against
   * it (default true; the demo searched it already and pairs afterwards).
   */
  baseline?: boolean;
}

/**
 * What a point is made from: the problems it is measured on (ids, questions, gold answers) and
 * the strategy and budget of the point. A point of a points file made from other problems (the
 * same count of another --sim-seed, an edited data file) is measured again.
 */
function pointDigest(
  problems: readonly Problem[],
  run: { strategy: string; knob?: string; budget?: number },
  settings: JobSettings | undefined,
): string {
  return madeFromDigest(
    { point: pointKey(run), problems: problems.map((p) => [p.id, p.question, p.answer]) },
    settings,
  );
}

function pointKey(p: { strategy: string; knob?: string; budget?: number }): string {
  return p.knob ? `${p.strategy}:${p.knob}=${p.budget}` : p.strategy;
}

/** Points already in `file` by key (a torn last line is dropped); throws when made with other settings. */
function readPoints(file: string, settings: JobSettings | undefined): Map<string, BenchPoint> {
  const done = new Map<string, BenchPoint>();
  if (!existsSync(file)) return done;
  const text = readFileSync(file, 'utf8');
  let good = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    let row: BenchPoint & { job?: JobSettings };
    try {
      row = JSON.parse(lines[i]);
    } catch {
      continue; // a torn line from a kill: that point is computed again
    }
    if (settings) assertSameSettings(file, i + 1, row, settings);
    const { job: _job, ...point } = row;
    done.set(pointKey(point), point);
    good += `${lines[i]}\n`;
  }
  if (good !== text) writeFileSync(file, good);
  return done;
}

/**
 * Sweep budgets for several strategies over the same problems (same seed): accuracy against
 * mean policy + judge tokens per problem, so strategies are compared at matched compute. Sample,
 * majority, best-of-n and weighted vote read one pool of N_max solutions per problem (nested
 * prefixes), and every point carries its paired difference against plain sampling.
 */
export async function benchSearch(options: BenchOptions): Promise<BenchReport> {
  const t0 = Date.now();
  const given = options.specs ?? DEFAULT_BENCH_SPECS;
  const specs = options.baseline === false ? given : withBaselineSpec(given);
  // One pool of whole solutions per problem for every pooled point: N_max samples, not Σn.
  const pools = new SolutionPools();
  const ids = options.problems.map((p) => p.id);
  const runs: Array<{ strategy: string; knob?: string; budget?: number }> = [];
  for (const s of specs) {
    const knob = getStrategy(s.strategy).budget;
    if (!knob || s.budgets.length === 0) runs.push({ strategy: s.strategy });
    else for (const b of s.budgets) runs.push({ strategy: s.strategy, knob, budget: b });
  }
  const points: BenchPoint[] = [];
  // A policy or judge reached by any name that the sim server answered marks its records.
  let recordsSimulated = false;
  const isSimulated = (): boolean =>
    options.simulated === true ||
    recordsSimulated ||
    worldOfJudge(options.deps.judge) === 'sim' ||
    options.problems.some((p) => p.source === 'sim');
  const limit = pLimit(Math.max(1, options.concurrency ?? 4));
  const file = options.pointsFile;
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    if (options.fresh) writeFileSync(file, '');
  }
  const kept = file ? readPoints(file, options.settings) : new Map<string, BenchPoint>();
  let redone = 0;
  let unverified = 0;
  for (const run of runs) {
    const had = kept.get(pointKey(run));
    if (!had) continue;
    const digest = recordedMadeFrom(had);
    if (digest === undefined) unverified++;
    else if (digest !== pointDigest(options.problems, run, options.settings)) {
      redone++;
      kept.delete(pointKey(run));
    }
  }
  if (options.strictResume && (redone > 0 || unverified > 0))
    throw new UsageError(
      `${file}: ${redone} points were measured on other problems than this run's and ${unverified} record no digest of their problems (an older points file): ` +
        '--strict-resume refuses to redo or keep them (rerun without --strict-resume, or --fresh to start over)',
    );
  if (unverified > 0)
    options.onWarning?.(
      `${file} holds ${unverified} points written before stepwise recorded what each point is made from: they are kept unchecked (pass --strict-resume to refuse them, or --fresh)`,
    );
  if (redone > 0) options.onRedone?.(redone);
  options.onResume?.(runs.filter((r) => kept.has(pointKey(r))).length);
  for (const [i, run] of runs.entries()) {
    const had = kept.get(pointKey(run));
    if (had) {
      const {
        [MADE_FROM_FIELD]: _digest,
        simulated: _simulated,
        ...done
      } = had as BenchPoint & { madeFrom?: string; simulated?: boolean };
      points.push(done);
      options.onPoint?.(done, i, runs.length);
      continue;
    }
    options.deps.signal?.throwIfAborted();
    const config: Partial<SearchConfig> = { ...options.config };
    if (run.knob && run.budget !== undefined) (config as Record<string, unknown>)[run.knob] = run.budget;
    const records = await Promise.all(
      options.problems.map((p) =>
        limit(async () => {
          // In-process (sim) models never wait on I/O: yield so Ctrl-C is heard between problems.
          await new Promise<void>((r) => setImmediate(r));
          const deps = POOLED_STRATEGIES.includes(run.strategy) ? { ...options.deps, pools } : options.deps;
          return toSearchRecord(p, await runStrategy(run.strategy, p, config, deps), {
            trace: false,
            segmentation: config.segmentation,
          });
        }),
      ),
    );
    const s: SearchSummary = summarizeSearch(run.strategy, records);
    if (s.simulated) recordsSimulated = true;
    const point: BenchPoint = {
      strategy: run.strategy,
      ...(run.knob ? { knob: run.knob, budget: run.budget } : {}),
      accuracy: s.accuracy,
      correct: s.correct,
      checked: s.checked,
      costPerProblem: s.costPerProblem,
      ...(s.judgeReplies !== undefined
        ? {
            formatFailures: s.formatFailures,
            judgeReplies: s.judgeReplies,
            formatFailureRate: s.formatFailureRate,
          }
        : {}),
      outcomes: outcomeString(ids, new Map(records.map((r) => [r.id, r.correct]))),
    };
    points.push(point);
    // Every line of the points file says whether its world is simulated, as the report does.
    const row = {
      ...point,
      ...(isSimulated() ? { simulated: true as const } : {}),
      [MADE_FROM_FIELD]: pointDigest(options.problems, run, options.settings),
    };
    if (file)
      appendFileSync(
        file,
        `${JSON.stringify(options.settings ? withSettings(row, options.settings) : row)}\n`,
      );
    options.onPoint?.(point, i, runs.length);
  }
  pools.clear();
  const simulated = isSimulated();
  const gold = options.deps.judgeUsedGold === true;
  return {
    simulated,
    ...(gold ? { judgeUsedGold: true as const } : {}),
    note:
      (simulated
        ? 'SIMULATED world (src/sim): these numbers describe the simulator, not a real model.'
        : 'Measured on the given models and problems.') +
      (gold ? ' The judge read the gold answer (--allow-gold-judge): not a fair test of search.' : ''),
    problems: options.problems.length,
    policy: options.policy,
    judge: options.judge,
    segmentation: options.config?.segmentation ?? 'paragraph',
    config: options.config ?? {},
    points: withPairedDifferences(points, ids),
    ...poolCostOf(points),
    seconds: (Date.now() - t0) / 1000,
  };
}

/**
 * Each point with its paired difference against the plain-sampling point (same problems, by
 * `outcomes`); points are returned unchanged when there is no plain-sampling point to pair with.
 */
export function withPairedDifferences(points: readonly BenchPoint[], ids: readonly string[]): BenchPoint[] {
  const base = points.find((p) => p.strategy === 'sample' && p.outcomes !== undefined);
  if (!base?.outcomes) return [...points];
  const baseline = outcomesOf(ids, base.outcomes);
  return points.map((p) =>
    p === base || p.outcomes === undefined
      ? p
      : { ...p, paired: pairedDifference(baseline, outcomesOf(ids, p.outcomes)) },
  );
}

/**
 * The pooled points' shared cost. Candidates are nested, so the pool per problem is what the
 * largest pooled point drew (policy) plus what the largest judged pooled point judged (judge).
 */
export function poolCostOf(points: readonly BenchPoint[]): { pool?: PoolCost } {
  const pooled = points.filter((p) => POOLED_STRATEGIES.includes(p.strategy));
  if (pooled.length === 0) return {};
  const max = (f: (p: BenchPoint) => number) => Math.max(0, ...pooled.map(f));
  const c = {
    policyTokens: max((p) => p.costPerProblem.policyTokens),
    judgeTokens: max((p) => p.costPerProblem.judgeTokens),
    policyCalls: max((p) => p.costPerProblem.policyCalls),
    judgeCalls: max((p) => p.costPerProblem.judgeCalls),
  };
  const nMax = max((p) => (p.knob === 'n' ? (p.budget ?? 1) : 1));
  return {
    pool: {
      strategies: [...new Set(pooled.map((p) => p.strategy))],
      nMax,
      samplesPerProblem: nMax,
      costPerProblem: { ...c, totalTokens: c.policyTokens + c.judgeTokens },
    },
  };
}

/** Accuracy vs mean tokens per problem (policy + judge), one line per strategy, as SVG. */
export function benchChart(report: BenchReport): string {
  const byStrategy = new Map<string, BenchPoint[]>();
  for (const p of report.points) byStrategy.set(p.strategy, [...(byStrategy.get(p.strategy) ?? []), p]);
  return renderLineChart({
    title: `Accuracy vs compute (${report.problems} problems)`,
    subtitle: report.simulated ? 'SIMULATED world — not real model results' : undefined,
    xLabel: 'policy + judge tokens per problem',
    yLabel: 'accuracy (bars: 95% interval)',
    logX: true,
    series: [...byStrategy].map(([name, pts]) => ({
      name,
      points: pts.map((p) => ({
        x: Math.max(1, p.costPerProblem.totalTokens),
        y: p.accuracy,
        ...(p.checked > 0 ? (([yLow, yHigh]) => ({ yLow, yHigh }))(wilson95(p.correct, p.checked)) : {}),
        label: p.knob ? `${p.knob} = ${p.budget}` : undefined,
      })),
    })),
  });
}

/** "N_max = 16 samples per problem for sample, majority, best-of-n: 2,130 tokens per problem (…)". */
export function poolCostLine(pool: PoolCost): string {
  const c = pool.costPerProblem;
  return `${pool.strategies.join(', ')} read one pool of ${pool.nMax} sample${pool.nMax === 1 ? '' : 's'} per problem: the sweep of these points cost ${Math.round(c.totalTokens)} tokens per problem (${Math.round(c.policyTokens)} policy + ${Math.round(c.judgeTokens)} judge), not the sum of their rows`;
}
