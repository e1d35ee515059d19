import type { Command } from 'commander';
import type { CodeSegmentBy } from '../../code/index.js';
import { MUTATION_SIGNAL, runMutationLabelJob } from '../../code/index.js';
import { UsageError } from '../../core/errors.js';
import { humanEvalSource, mbppSource } from '../../data/code.js';
import { resumePhrase } from '../../jobs/made-from.js';
import { jobSettings } from '../../jobs/settings.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun } from '../../store/runs.js';
import { addConfigOption } from '../config-file.js';
import { jsonOption, quietOption, seedOption } from '../option-groups.js';
import { choiceOption, intOption, shardOption } from '../options.js';
import { createProgressBar, trackJobProgress } from '../progress.js';
import { UNSAFE_FILESYSTEM_HELP } from '../sandbox.js';
import { JSON_HELP, reportJob } from '../summary.js';
import { addAlias, strictResumeOption } from '../vocabulary.js';

const DATASETS = ['mbpp', 'humaneval'] as const;
const SEGMENTS: readonly CodeSegmentBy[] = ['blocks', 'lines'];

export function register(program: Command): void {
  const cmd = program
    .command('label-code')
    .description(
      'Step labels for code by mutation: mutate reference solutions (syntax tree), keep mutants that fail the tests, label steps before the first mutated one positive and that one negative (TRL stepwise rows)',
    )
    .requiredOption(
      '--dataset <name>',
      `code data set: ${DATASETS.join(' | ')}`,
      choiceOption('--dataset', DATASETS),
    )
    .option('--path <file>', 'data file (default: $STEPWISE_DATA/<dataset>, then the data pull cache)')
    .option('--split <name>', 'MBPP split by task id: test | train | validation | prompt (default: all 974)')
    .option('--limit <n>', 'label only the first n problems', intOption('--limit', 1))
    .option(
      '--mutants-per-problem <k>',
      'failing mutants to keep per problem',
      intOption('--mutants-per-problem', 1),
      3,
    )
    .option(
      '--max-attempts <n>',
      'mutants to try per problem before giving up',
      intOption('--max-attempts', 1),
      24,
    )
    .addOption(seedOption('seed for the order in which mutants are tried', { default: 0 }))
    .option(
      '--segmentation <how>',
      `steps: ${SEGMENTS.join(' | ')} (logical blocks or lines)`,
      choiceOption('--segmentation', SEGMENTS),
      'blocks',
    )
    .option('--no-reference', 'do not add the reference solution as an all-positive row')
    .option(
      '--timeout-ms <ms>',
      'wall-clock limit per test in the sandbox',
      intOption('--timeout-ms', 100),
      5000,
    )
    .option(
      '--concurrency <n>',
      'sandbox runs at a time (default: number of cores)',
      intOption('--concurrency', 1),
    )
    .requiredOption(
      '--out <file>',
      'output JSONL: one row per labeled solution ({prompt, completions, labels} + label-file fields)',
    )
    .option('--fresh', 'start over instead of resuming from <out>.parts.jsonl')
    .addOption(strictResumeOption())
    .addOption(shardOption('problems'))
    .option('--store <path>', 'SQLite store for the run record (default $STEPWISE_HOME/store.sqlite)')
    .addOption(quietOption('no progress bar'))
    .option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP)
    .addOption(jsonOption(JSON_HELP))
    .action(async (flags) => {
      if (flags.split !== undefined && flags.dataset !== 'mbpp')
        throw new UsageError('--split applies to --dataset mbpp only');
      const loaded =
        flags.dataset === 'mbpp'
          ? mbppSource({ path: flags.path, split: flags.split, limit: flags.limit })
          : humanEvalSource({ path: flags.path, limit: flags.limit });
      // Read once before any work (a bad record fails here, naming file, line and field), then
      // again as the job goes: the problems are never all in memory.
      let count = 0;
      for await (const _ of loaded.read()) count++;
      if (count === 0) throw new UsageError(`${loaded.path}: no problems to label`);
      const db = openStore(flags.store ?? defaultStorePath());
      const config = {
        dataset: flags.dataset,
        path: loaded.path,
        split: flags.split,
        limit: flags.limit,
        mutantsPerProblem: flags.mutantsPerProblem,
        maxAttempts: flags.maxAttempts,
        seed: flags.seed,
        segment: flags.segmentation,
        reference: flags.reference,
        timeoutMs: flags.timeoutMs,
      };
      const { limit: _limit, ...rowSettings } = config;
      const settings = jobSettings('label-code', rowSettings);
      const runId = startRun(
        db,
        'label-code',
        {
          ...config,
          ...(flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {}),
          job: settings,
        },
        flags.out,
      );
      const bar = createProgressBar('label-code', { quiet: flags.quiet });
      try {
        const summary = await runMutationLabelJob({
          problems: loaded.read(),
          total: count,
          out: flags.out,
          mutantsPerProblem: flags.mutantsPerProblem,
          maxAttempts: flags.maxAttempts,
          seed: flags.seed,
          segment: flags.segmentation,
          includeReference: flags.reference,
          limits: { timeoutMs: flags.timeoutMs, programTimeoutMs: flags.timeoutMs },
          concurrency: flags.concurrency,
          fresh: flags.fresh,
          strictResume: flags.strictResume,
          onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
          shard: flags.shard,
          settings,
          onProgress: trackJobProgress(bar, db, runId),
        });
        bar.stop();
        finishRun(db, runId, 'done', {
          problems: summary.problems,
          labeled: summary.labeled,
          rows: summary.rows,
          steps: summary.steps,
          mutantsTried: summary.mutantsTried,
        });
        reportJob(
          {
            command: 'label-code',
            headline: `${summary.labeled} of ${summary.problems} problems (${(100 * summary.labeledShare).toFixed(1)}%) have a failing mutant`,
            lines: [
              ['rows', `${summary.rows} (${summary.mutantRows} mutant, ${summary.referenceRows} reference)`],
              ['steps', `${summary.positiveSteps} positive, ${summary.negativeSteps} negative`],
              ['resume', resumePhrase(summary)],
            ],
            wrote: [flags.out],
            run: runId,
            next: `  export: stepwise export --task prm --format trl --signal ${MUTATION_SIGNAL} --input ${flags.out} --out <file>`,
          },
          {
            run: runId,
            signal: MUTATION_SIGNAL,
            ...(flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {}),
            ...summary,
          },
          flags,
        );
      } catch (e) {
        bar.stop();
        finishRun(db, runId, 'failed');
        throw e;
      } finally {
        db.close();
      }
    });
  addAlias(cmd, '--segmentation', '--segment');
  addAlias(cmd, '--timeout-ms', '--timeout');
  addConfigOption(cmd, { command: 'label-code', renames: { segment: 'segmentation' } });
}
