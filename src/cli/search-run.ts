import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { resumePhrase } from '../jobs/made-from.js';
import type { Shard } from '../jobs/run-job.js';
import {
  benchChart,
  benchSearch,
  DEFAULT_BENCH_SPECS,
  parseBenchSpec,
  poolCostLine,
  withBaselineSpec,
} from '../search/bench.js';
import { searchDataset } from '../search/dataset.js';
import { formatPaired } from '../search/paired.js';
import { getStrategy } from '../search/registry.js';
import { defaultStorePath } from '../store/db.js';
import { type DatasetFlags, loadDatasetProblems, scanDatasetProblems, searchDomainFor } from './datasets.js';
import { runJobCommand } from './job-harness.js';
import {
  buildSearchDeps,
  checkedStrategyConfig,
  definedFields,
  isSimSpec,
  recordedStrategyConfig,
  type SearchFlags,
  searchSettings,
} from './search-setup.js';
import { assertSimWorldInputs, simWorldInputCheck } from './sim-guard.js';
import { cachePhrase, SIMULATED_WORLD, share } from './summary.js';
import { warn } from './warn.js';

/** The flags of `stepwise search`: the search settings and models (SearchFlags), the data set, the run. */
export interface SearchCommandFlags extends SearchFlags, DatasetFlags {
  strategy: string;
  out: string;
  concurrency: number;
  fresh?: boolean;
  strictResume?: boolean;
  shard?: Shard;
  batchOut?: string;
  batchIn?: string;
  trace: boolean;
  goldCheck?: boolean;
  quiet?: boolean;
  simGuess?: boolean;
  json?: boolean;
}

/** A policy, judge or outcome spec names the simulated world. */
const simSpecs = (f: SearchFlags): boolean =>
  isSimSpec(f.policy) || isSimSpec(f.judge) || isSimSpec(f.outcome);

/**
 * What `stepwise search` does once its flags are parsed: check the settings, read the data set
 * once (bad records fail before any work), build the models, and search every problem in the job
 * harness (run record started once the output is found resumable, progress in problems, summary).
 */
export async function runSearchCommand(f: SearchCommandFlags): Promise<void> {
  if (f.batchOut !== undefined || f.batchIn !== undefined)
    throw new UsageError(
      `--batch-out / --batch-in: search is adaptive — each step's request depends on the answers to the last ones ` +
        `(the judge's verdict decides whether a chunk is kept, reset or expanded), so one round per step of every ` +
        `problem would be needed (dozens of rounds). Run search online against your servers, split over machines ` +
        `with --shard K/N (docs/scale.md); label, sample, eval processbench and select take batch files`,
    );
  getStrategy(f.strategy);
  checkedStrategyConfig(f);
  // Read once before any work (bad records and simulated-world mismatches fail here), then
  // again as the search goes: the problems are never all in memory.
  const dataset = await scanDatasetProblems(
    f,
    simWorldInputCheck(
      { policy: f.policy, judge: f.judge, outcome: f.outcome },
      { guess: f.simGuess, source: f.dataset },
    ),
  );
  async function* problems() {
    for await (const p of dataset.read()) yield f.goldCheck !== false ? p : { ...p, answer: '' };
  }
  const built = await buildSearchDeps(f, [f.strategy]);
  const { domain, policy } = searchDomainFor(dataset, built.deps.policy, { form: f.promptForm });
  const deps = { ...built.deps, policy, domain };
  const out = resolve(f.out);
  const config = recordedStrategyConfig(f);
  const segmentation = config.segmentation;
  const settings = searchSettings('search', f, {
    strategy: f.strategy,
    trace: f.trace,
    goldCheck: f.goldCheck !== false,
  });
  const simulated = built.simulated || dataset.simulated || simSpecs(f);
  const shard = f.shard ? { shard: `${f.shard.index}/${f.shard.count}` } : {};
  await runJobCommand({
    command: 'search',
    label: `search ${f.strategy}`,
    out,
    store: f.store ?? defaultStorePath(),
    startWhenResumable: true,
    record: {
      ...{ strategy: f.strategy, config, problems: dataset.count },
      ...{
        dataset: f.dataset,
        policy: f.policy,
        judge: f.judge,
        outcome: f.outcome,
        simulated,
        segmentation,
      },
      ...shard,
      job: settings,
    },
    quiet: f.quiet,
    json: f.json,
    cleanup: built.close,
    run: ({ onStart, onProgress }) =>
      searchDataset({
        ...{
          problems: problems(),
          plan: problems(),
          total: dataset.count,
          strategy: f.strategy,
          config,
          deps,
        },
        ...{ out, concurrency: f.concurrency, fresh: f.fresh, strictResume: f.strictResume, shard: f.shard },
        ...{ settings, trace: f.trace, simulated, onWarning: warn, onStart },
        onProgress: (p) => onProgress({ ...p, unit: 'problems' }, `correct ${p.correct}`),
      }),
    counts: ({ summary: s }) => ({
      ...{ problems: s.problems, correct: s.correct, accuracy: s.accuracy },
      policyTokens: s.cost.policy.promptTokens + s.cost.policy.completionTokens,
      judgeTokens: s.cost.judge.promptTokens + s.cost.judge.completionTokens,
    }),
    summary: ({ summary, resumed, redone, unverified }, runId) => {
      const { simulated: fromProblems, ...rest } = summary;
      const isSim = simulated || fromProblems;
      const cache = built.cacheStats();
      const per = rest.costPerProblem;
      return {
        readable: {
          command: 'search',
          headline: `${f.strategy} over ${rest.problems} problems of ${f.dataset}`,
          world: isSim ? SIMULATED_WORLD : undefined,
          lines: [
            [
              'accuracy',
              f.goldCheck === false ? 'not checked (--no-gold-check)' : share(rest.correct, rest.checked),
            ],
            ['no answer', `${rest.noAnswer} problems`],
            [
              'per problem',
              `${per.totalTokens.toFixed(0)} tokens (policy ${per.policyTokens.toFixed(0)}, judge ${per.judgeTokens.toFixed(0)}); ${per.policyCalls.toFixed(1)} policy calls, ${per.judgeCalls.toFixed(1)} judge calls`,
            ],
            ...(rest.judgeUsedGold ? [['judge', 'read the gold answer: not a fair test'] as const] : []),
            ['cache', cachePhrase(cache)],
            ['resume', resumePhrase({ resumed, redone, unverified })],
            ['settings', settings.hash],
          ],
          wrote: [out],
          run: runId,
        },
        json: {
          run: runId,
          simulated: isSim,
          ...(isSim ? { note: 'SIMULATED world: not real model results' } : {}),
          ...{ dataset: f.dataset, policy: f.policy, judge: f.judge, segmentation, ...shard, out },
          ...rest,
          ...{ resumed, redone, unverified },
          cache: cache ?? { cachedCalls: 0, calls: 0, note: 'not cached' },
          settingsHash: settings.hash,
        },
      };
    },
  });
}

/** The flags of `stepwise bench search`. */
export interface BenchSearchFlags extends SearchFlags, DatasetFlags {
  strategies?: string[];
  out: string;
  svg?: string;
  concurrency: number;
  quiet?: boolean;
  fresh?: boolean;
  strictResume?: boolean;
  simGuess?: boolean;
  json?: boolean;
}

/** The sweep as `--strategies` takes it: `strategy:budget,budget…`. */
export const DEFAULT_BENCH_STRATEGIES = DEFAULT_BENCH_SPECS.map((s) =>
  s.budgets.length ? `${s.strategy}:${s.budgets.join(',')}` : s.strategy,
);

/**
 * What `stepwise bench search` does once its flags are parsed: measure every (strategy, budget)
 * point in the job harness (progress in points, each finished point kept in <out>.points.jsonl
 * at once and resumed from there), then write the JSON report and the SVG chart.
 */
export async function runBenchSearchCommand(f: BenchSearchFlags): Promise<void> {
  // Plain sampling is always measured: every other point is paired against it.
  const specs = withBaselineSpec(f.strategies ? f.strategies.map(parseBenchSpec) : DEFAULT_BENCH_SPECS);
  checkedStrategyConfig(f);
  const problems = await loadDatasetProblems(f);
  assertSimWorldInputs({ policy: f.policy, judge: f.judge, outcome: f.outcome }, problems, {
    guess: f.simGuess,
    source: f.dataset,
  });
  const built = await buildSearchDeps(
    f,
    specs.map((s) => s.strategy),
  );
  // Code problems search in the code domain (code policy, logical blocks, tests as checker).
  const deps = { ...built.deps, ...searchDomainFor(problems, built.deps.policy, { form: f.promptForm }) };
  const out = resolve(f.out);
  const svg = resolve(f.svg ?? out.replace(/\.json$/i, '') + '.svg');
  // Each finished point goes to <out>.points.jsonl at once; a rerun with the same settings
  // takes them from there (the problem count is a setting: accuracy is over all problems).
  const pointsFile = `${out.replace(/\.json$/i, '')}.points.jsonl`;
  const settings = searchSettings('bench search', f, { specs, limit: f.limit, count: f.count });
  const config = recordedStrategyConfig(f);
  const total = specs.reduce((s, x) => s + Math.max(1, x.budgets.length), 0);
  let resumed = 0;
  await runJobCommand({
    command: 'bench search',
    out,
    store: f.store ?? defaultStorePath(),
    record: { ...definedFields(f), segmentation: config.segmentation, specs, job: settings },
    quiet: f.quiet,
    json: f.json,
    cleanup: built.close,
    async run({ onProgress }) {
      const report = await benchSearch({
        ...{ problems, specs, config, deps, concurrency: f.concurrency, policy: f.policy, judge: f.judge },
        simulated: built.simulated || simSpecs(f),
        ...{ pointsFile, settings, fresh: f.fresh, strictResume: f.strictResume, onWarning: warn },
        onRedone: (n) =>
          process.stderr.write(
            `bench search: ${n} points of ${pointsFile} were measured on other problems: measured again\n`,
          ),
        onResume: (n) => {
          resumed = n;
          if (n > 0 && !f.quiet && !process.env.STEPWISE_QUIET)
            process.stderr.write(`bench search: ${n} of ${total} points resumed from ${pointsFile}\n`);
        },
        onPoint: (p, i, n) =>
          onProgress(
            { done: i + 1, total: n, resumed, unit: 'points' },
            `${p.strategy}${p.budget ? ` ${p.knob}=${p.budget}` : ''}`,
          ),
      });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(svg, benchChart(report));
      return report;
    },
    counts: (report) => ({ problems: report.problems, points: report.points.length }),
    summary: (report, runId) => ({
      readable: {
        command: 'bench search',
        headline: `${report.points.length} points over ${report.problems} problems in ${report.seconds.toFixed(1)} s`,
        world: report.simulated ? SIMULATED_WORLD : undefined,
        lines: [
          ...report.points.map(
            (p) =>
              [
                `${p.strategy}${p.budget !== undefined ? ` ${p.knob}=${p.budget}` : ''}`,
                `accuracy ${share(p.correct, p.checked)}, ${p.costPerProblem.totalTokens.toFixed(0)} tokens per problem${p.paired ? `; ${formatPaired(p.paired)}` : ''}`,
              ] as const,
          ),
          ...(report.pool ? [['shared pool', poolCostLine(report.pool)] as const] : []),
        ],
        wrote: [out, svg, pointsFile],
        run: runId,
      },
      json: { run: runId, out, svg, pointsFile, settingsHash: settings.hash, ...report },
    }),
  });
}
