import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  benchChart,
  benchSearch,
  DEFAULT_BENCH_SPECS,
  parseBenchSpec,
  poolCostLine,
  withBaselineSpec,
} from '../../search/bench.js';
import { formatPaired } from '../../search/paired.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun } from '../../store/runs.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetOptions, type DatasetFlags, loadDatasetProblems, searchDomainFor } from '../datasets.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { intOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import {
  addModelOptions,
  addStrategyOptions,
  buildSearchDeps,
  definedFields,
  isSimSpec,
  SEARCH_SETTING_FLAGS,
  type SearchFlags,
  searchSettings,
  strategyConfig,
} from '../search-setup.js';
import { addSimGuessOption, assertSimWorldInputs } from '../sim-guard.js';
import { JSON_HELP, reportJob, SIMULATED_WORLD, share } from '../summary.js';
import { strictResumeOption } from '../vocabulary.js';

interface BenchSearchFlags extends SearchFlags, DatasetFlags {
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

const defaultSpecs = DEFAULT_BENCH_SPECS.map((s) =>
  s.budgets.length ? `${s.strategy}:${s.budgets.join(',')}` : s.strategy,
);

/** `stepwise bench search`: accuracy vs compute for several strategies and budgets, JSON + SVG. */
export function register(program: Command): void {
  const bench = program
    .command('bench')
    .description('Benchmarks that sweep settings and write JSON reports and charts');
  const cmd = bench
    .command('search')
    .description(
      'Sweep budgets of several search strategies: accuracy vs policy + judge tokens (JSON and SVG chart)',
    );
  addSimGuessOption(addDatasetOptions(cmd));
  // Off by default: a cached call costs nothing, and points share requests (best-of-4's first
  // samples are best-of-16's first samples), which would understate the compute axis.
  addModelOptions(cmd, { cacheByDefault: false });
  addStrategyOptions(cmd);
  cmd
    .option(
      '--strategies <specs...>',
      `strategy:budget,budget… (budget = N, attempts or children per node) (default ${defaultSpecs.join(' ')})`,
    )
    .requiredOption(
      '--out <file>',
      'JSON report: one point per strategy and budget with accuracy and cost per problem',
    )
    .option('--svg <file>', 'SVG chart of accuracy vs tokens (default: the --out path with .svg)')
    .option('--concurrency <c>', 'problems searched at once', intOption('--concurrency', 1), 4)
    .option('--fresh', 'start the sweep over instead of resuming the finished points in <out>.points.jsonl')
    .addOption(strictResumeOption())
    .addOption(quietOption('no progress bar'))
    .addOption(jsonOption(JSON_HELP));
  addConfigOption(cmd, {
    command: 'bench search',
    renames: SEARCH_SETTING_FLAGS,
    fileDigests: ['chatTemplate'],
    // The sweep is recorded parsed ({strategy, budgets}): back to `strategy:budget,…` items.
    adapt: ({ specs, ...rest }) =>
      Array.isArray(specs)
        ? {
            ...rest,
            strategies: (specs as Array<{ strategy?: unknown; budgets?: unknown }>).map((s) =>
              Array.isArray(s.budgets) && s.budgets.length > 0
                ? `${String(s.strategy)}:${s.budgets.join(',')}`
                : String(s.strategy),
            ),
          }
        : { ...rest, ...(specs === undefined ? {} : { strategies: specs }) },
  });
  cmd.action(async (f: BenchSearchFlags) => {
    // Plain sampling is always measured: every other point is paired against it.
    const specs = withBaselineSpec(f.strategies ? f.strategies.map(parseBenchSpec) : DEFAULT_BENCH_SPECS);
    const problems = await loadDatasetProblems(f);
    assertSimWorldInputs({ policy: f.policy, judge: f.judge, outcome: f.outcome }, problems, {
      guess: f.simGuess,
      source: f.dataset,
    });
    const {
      deps: built,
      close,
      simulated: simulatedModels,
    } = await buildSearchDeps(
      f,
      specs.map((s) => s.strategy),
    );
    // Code problems search in the code domain (code policy, logical blocks, tests as checker).
    const deps = { ...built, ...searchDomainFor(problems, built.policy, { form: f.promptForm }) };
    const out = resolve(f.out);
    const svg = resolve(f.svg ?? out.replace(/\.json$/i, '') + '.svg');
    const db = openStore(f.store ?? defaultStorePath());
    // Each finished point goes to <out>.points.jsonl at once; a rerun with the same settings
    // takes them from there (the problem count is a setting: accuracy is over all problems).
    const pointsFile = `${out.replace(/\.json$/i, '')}.points.jsonl`;
    const settings = searchSettings('bench search', f, { specs, limit: f.limit, count: f.count });
    const runId = startRun(db, 'bench search', { ...definedFields(f), specs, job: settings }, out);
    const bar = createProgressBar('bench search', { quiet: f.quiet });
    const total = specs.reduce((s, x) => s + Math.max(1, x.budgets.length), 0);
    try {
      const report = await benchSearch({
        problems,
        specs,
        config: definedFields(strategyConfig(f)),
        deps,
        concurrency: f.concurrency,
        policy: f.policy,
        judge: f.judge,
        simulated: simulatedModels || isSimSpec(f.policy) || isSimSpec(f.judge) || isSimSpec(f.outcome),
        pointsFile,
        settings,
        fresh: f.fresh,
        strictResume: f.strictResume,
        onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
        onRedone: (n) =>
          process.stderr.write(
            `bench search: ${n} points of ${pointsFile} were measured on other problems: measured again\n`,
          ),
        onResume: (n) => {
          if (n > 0 && !f.quiet && !process.env.STEPWISE_QUIET)
            process.stderr.write(`bench search: ${n} of ${total} points resumed from ${pointsFile}\n`);
        },
        onPoint: (p, i, n) =>
          bar.update(i + 1, n, `${p.strategy}${p.budget ? ` ${p.knob}=${p.budget}` : ''}`),
      });
      bar.stop();
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(svg, benchChart(report));
      finishRun(db, runId, 'done', { problems: report.problems, points: report.points.length });
      reportJob(
        {
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
        { run: runId, out, svg, pointsFile, settingsHash: settings.hash, ...report },
        f,
      );
    } catch (err) {
      finishRun(db, runId, 'failed');
      throw err;
    } finally {
      bar.stop();
      await close();
    }
  });
}
