import type { Command } from 'commander';
import { addConfigOption } from '../config-file.js';
import { addDatasetOptions } from '../datasets.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { intOption } from '../options.js';
import { DEFAULT_BENCH_STRATEGIES, runBenchSearchCommand } from '../search-run.js';
import { addModelOptions, addStrategyOptions, SEARCH_SETTING_FLAGS } from '../search-setup.js';
import { addSimGuessOption } from '../sim-guard.js';
import { strictResumeOption } from '../vocabulary.js';

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
      `strategy:budget,budget… (budget = N, attempts or children per node) (default ${DEFAULT_BENCH_STRATEGIES.join(' ')})`,
    )
    .requiredOption(
      '--out <file>',
      'JSON report: one point per strategy and budget with accuracy and cost per problem',
    )
    .option('--svg <file>', 'SVG chart of accuracy vs tokens (default: the --out path with .svg)')
    .option('--concurrency <c>', 'problems searched at once', intOption('--concurrency', 1), 4)
    .option('--fresh', 'start the sweep over instead of resuming the finished points in <out>.points.jsonl')
    .addOption(strictResumeOption())
    .addOption(quietOption())
    .addOption(jsonOption());
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
  cmd.action(runBenchSearchCommand);
}
