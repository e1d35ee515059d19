import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import { resumePhrase } from '../../jobs/made-from.js';
import type { Shard } from '../../jobs/run-job.js';
import { getStrategy, STRATEGY_NAMES } from '../../search/registry.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetOptions, type DatasetFlags, scanDatasetProblems, searchDomainFor } from '../datasets.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { intOption, shardOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import {
  addModelOptions,
  addStrategyOptions,
  buildSearchDeps,
  definedFields,
  recordedSearch,
  SEARCH_SETTING_FLAGS,
  type SearchFlags,
  searchSettings,
  strategyConfig,
} from '../search-setup.js';
import { addSimGuessOption, isSimSpec, simWorldInputCheck } from '../sim-guard.js';
import { cachePhrase, JSON_HELP, reportJob, SIMULATED_WORLD, share } from '../summary.js';
import { strictResumeOption } from '../vocabulary.js';

interface SearchCommandFlags extends SearchFlags, DatasetFlags {
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

/** `stepwise search`: one strategy over a data set, accuracy and cost per problem, resumable. */
export function register(program: Command): void {
  const cmd = program
    .command('search')
    .description('Run one search strategy over a data set: accuracy and cost per problem (resumable JSONL)');
  addDatasetOptions(cmd);
  addModelOptions(cmd);
  addSimGuessOption(cmd);
  cmd.addOption(
    new Option('--strategy <name>', 'search strategy')
      .choices(STRATEGY_NAMES as string[])
      .makeOptionMandatory(),
  );
  addStrategyOptions(cmd);
  cmd
    .requiredOption(
      '--out <file>',
      'output JSONL: one line per problem {id, answer, correct, finalText, chunks, cost, stats, trace}',
    )
    .option('--concurrency <c>', 'problems searched at once', intOption('--concurrency', 1), 4)
    .option('--fresh', 'start the output over instead of resuming it')
    .addOption(strictResumeOption())
    .addOption(shardOption('problems'))
    .option(
      '--batch-out <file>',
      'not for search: a search decides each step from the last answer, so it cannot be written as batch files',
    )
    .option('--batch-in <file>', 'not for search (see --batch-out)')
    .option('--no-trace', 'leave the attempt tree out of the output lines')
    .option('--gold-check', 'check final answers against the gold answers (the default)')
    .option(
      '--no-gold-check',
      'do not check final answers against the gold answers (accuracy is then not reported)',
    )
    .addOption(quietOption('no progress bar'))
    .addOption(jsonOption(JSON_HELP));
  addConfigOption(cmd, { command: 'search', renames: SEARCH_SETTING_FLAGS, fileDigests: ['chatTemplate'] });
  cmd.action(async (f: SearchCommandFlags) => {
    if (f.batchOut !== undefined || f.batchIn !== undefined)
      throw new UsageError(
        `--batch-out / --batch-in: search is adaptive — each step's request depends on the answers to the last ones ` +
          `(the judge's verdict decides whether a chunk is kept, reset or expanded), so one round per step of every ` +
          `problem would be needed (dozens of rounds). Run search online against your servers, split over machines ` +
          `with --shard K/N (docs/scale.md); label, sample, eval processbench and select take batch files`,
      );
    getStrategy(f.strategy);
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
    const { close } = built;
    const { domain, policy } = searchDomainFor(dataset, built.deps.policy, { form: f.promptForm });
    const deps = { ...built.deps, policy, domain };
    const out = resolve(f.out);
    const settings = searchSettings('search', f, {
      strategy: f.strategy,
      trace: f.trace,
      goldCheck: f.goldCheck !== false,
    });
    const bar = createProgressBar(`search ${f.strategy}`, { quiet: f.quiet });
    const simulated =
      built.simulated ||
      dataset.simulated ||
      isSimSpec(f.policy) ||
      isSimSpec(f.judge) ||
      isSimSpec(f.outcome);
    try {
      const { summary, runId, resumed, redone, unverified } = await recordedSearch(
        openStore(f.store ?? defaultStorePath()),
        {
          problems: problems(),
          plan: problems(),
          total: dataset.count,
          strategy: f.strategy,
          config: definedFields(strategyConfig(f)),
          deps,
          out,
          concurrency: f.concurrency,
          fresh: f.fresh,
          strictResume: f.strictResume,
          onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
          shard: f.shard,
          settings,
          trace: f.trace,
          simulated,
          onProgress: (p) =>
            bar.update(p.done, p.total, `correct ${p.correct}${p.resumed ? ` (${p.resumed} resumed)` : ''}`),
        },
        {
          dataset: f.dataset,
          policy: f.policy,
          judge: f.judge,
          outcome: f.outcome,
          simulated,
          segmentation: f.segmentation ?? 'paragraph',
        },
      );
      bar.stop();
      const { simulated: fromProblems, ...rest } = summary;
      const isSim = simulated || fromProblems;
      const report = {
        run: runId,
        simulated: isSim,
        ...(isSim ? { note: 'SIMULATED world: not real model results' } : {}),
        dataset: f.dataset,
        policy: f.policy,
        judge: f.judge,
        segmentation: f.segmentation ?? 'paragraph',
        ...(f.shard ? { shard: `${f.shard.index}/${f.shard.count}` } : {}),
        out,
        ...rest,
        resumed,
        redone,
        unverified,
        cache: built.cacheStats() ?? { cachedCalls: 0, calls: 0, note: 'not cached' },
        settingsHash: settings.hash,
      };
      reportJob(
        {
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
              `${rest.costPerProblem.totalTokens.toFixed(0)} tokens (policy ${rest.costPerProblem.policyTokens.toFixed(0)}, judge ${rest.costPerProblem.judgeTokens.toFixed(0)}); ${rest.costPerProblem.policyCalls.toFixed(1)} policy calls, ${rest.costPerProblem.judgeCalls.toFixed(1)} judge calls`,
            ],
            ...(rest.judgeUsedGold ? [['judge', 'read the gold answer: not a fair test'] as const] : []),
            ['cache', cachePhrase(built.cacheStats())],
            ['resume', resumePhrase({ resumed, redone, unverified })],
            ['settings', settings.hash],
          ],
          wrote: [out],
          run: runId,
        },
        report,
        f,
      );
    } finally {
      bar.stop();
      await close();
    }
  });
}
