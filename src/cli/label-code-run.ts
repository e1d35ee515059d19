import {
  LABEL_CODE_SETTINGS,
  type LabelCodeConfig,
  labelCodeJobSettings,
  resolveLabelCodeConfig,
} from '../code/config.js';
import { MUTATION_SIGNAL, type MutationLabelSummary, runMutationLabelJob } from '../code/index.js';
import { UsageError } from '../core/errors.js';
import { humanEvalSource, mbppSource } from '../data/code.js';
import { resumePhrase } from '../jobs/made-from.js';
import { flagName } from '../jobs/settings.js';
import { runJobCommand } from './job-harness.js';
import type { RunFlags } from './option-groups.js';
import { settingsFromFlags } from './settings-options.js';
import { warn } from './warn.js';

/** The code data sets `label-code` reads, each by its own loader. */
export const LABEL_CODE_DATASETS = ['mbpp', 'humaneval'] as const;

/** The flags: the fields of {@link LabelCodeConfig} by name (LABEL_CODE_SETTINGS), then the data set and the run. */
export type LabelCodeFlags = Partial<LabelCodeConfig> &
  RunFlags & {
    dataset: (typeof LABEL_CODE_DATASETS)[number];
    path?: string;
    split?: string;
    limit?: number;
    strictResume?: boolean;
    store?: string;
  };

/**
 * What `stepwise label-code` does once its flags are parsed: resolve the config, read the code
 * problems once (a bad record fails before any work), and label them by mutation in the job
 * harness (run record, progress in problems, summary). Tests run in the sandbox.
 */
export async function runLabelCodeCommand(flags: LabelCodeFlags): Promise<void> {
  const config = resolveLabelCodeConfig(settingsFromFlags(LABEL_CODE_SETTINGS, { ...flags }), flagName);
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
  // `--limit` is not a setting: a run resumes with more problems.
  const context = { dataset: flags.dataset, path: loaded.path, split: flags.split };
  const settings = labelCodeJobSettings(config, context);
  const { concurrency: _concurrency, segmentation, ...rowConfig } = config;
  const shard = flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {};
  await runJobCommand<MutationLabelSummary>({
    command: 'label-code',
    out: flags.out,
    store: flags.store,
    record: { ...context, limit: flags.limit, ...rowConfig, segment: segmentation, ...shard, job: settings },
    quiet: flags.quiet,
    json: flags.json,
    run: ({ onProgress }) =>
      runMutationLabelJob({
        problems: loaded.read(),
        total: count,
        out: flags.out,
        mutantsPerProblem: config.mutantsPerProblem,
        maxAttempts: config.maxAttempts,
        seed: config.seed,
        segment: segmentation,
        includeReference: config.reference,
        limits: { timeoutMs: config.timeoutMs, programTimeoutMs: config.timeoutMs },
        concurrency: config.concurrency,
        fresh: flags.fresh,
        strictResume: flags.strictResume,
        onWarning: warn,
        shard: flags.shard,
        settings,
        onProgress,
      }),
    counts: (s) => ({
      problems: s.problems,
      labeled: s.labeled,
      rows: s.rows,
      steps: s.steps,
      mutantsTried: s.mutantsTried,
    }),
    summary: (s, runId) => ({
      readable: {
        command: 'label-code',
        headline: `${s.labeled} of ${s.problems} problems (${(100 * s.labeledShare).toFixed(1)}%) have a failing mutant`,
        lines: [
          ['rows', `${s.rows} (${s.mutantRows} mutant, ${s.referenceRows} reference)`],
          ['steps', `${s.positiveSteps} positive, ${s.negativeSteps} negative`],
          ['resume', resumePhrase(s)],
        ],
        wrote: [flags.out],
        run: runId,
        next: `  export: stepwise export --task prm --format trl --signal ${MUTATION_SIGNAL} --input ${flags.out} --out <file>`,
      },
      json: { run: runId, signal: MUTATION_SIGNAL, ...shard, ...s },
    }),
  });
}
