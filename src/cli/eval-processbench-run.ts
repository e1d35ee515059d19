import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import {
  PROCESSBENCH_SETTINGS,
  type ProcessBenchConfig,
  predictionsPathFor,
  processBenchJobSettings,
  resolveProcessBenchConfig,
  thresholdModeOf,
} from '../evaluate/config.js';
import {
  isSimulatedJudge,
  loadProcessBenchSamples,
  ProcessBenchPendingError,
  type ProcessBenchReport,
  runProcessBench,
  scanProcessBenchSamples,
  scoreJson,
  scorePredictions,
} from '../evaluate/processbench.js';
import { formatProcessBenchReport, formatScoreTable } from '../evaluate/table.js';
import { resumePhrase } from '../jobs/made-from.js';
import type { Shard } from '../jobs/run-job.js';
import { flagName } from '../jobs/settings.js';
import { createJudge } from '../judge/create.js';
import type { StepJudge } from '../judge/types.js';
import type { BatchFiles } from '../models/batch.js';
import { checkCriticTemplate } from '../prompts/critic.js';
import { type BatchFlags, batchOutcome, batchReport, nextRoundFile, openBatchFiles } from './batch.js';
import { runJobCommand } from './job-harness.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { simWorldInputCheck } from './sim-guard.js';
import { warn } from './warn.js';

/** The flags a judge-running `eval` command shares: the judge and how it is reached. */
export interface JudgeFlags {
  judge?: string;
  judgeVotes?: number;
  baseUrl?: string;
  apiKey?: string;
  seed?: number;
  cache: boolean;
  store?: string;
  quiet?: boolean;
  json?: boolean;
  simGuess?: boolean;
}

/** The flags of `eval processbench`: the fields of {@link PROCESSBENCH_SETTINGS} by name, then files and servers. */
export type EvalProcessbenchFlags = Partial<ProcessBenchConfig> &
  JudgeFlags &
  BatchFlags & {
    predictions?: string;
    path?: string;
    out?: string;
    fresh?: boolean;
    strictResume?: boolean;
    criticTemplate?: string;
    shard?: Shard;
  };

/** The judge of an `eval` command, from `--judge` and the server flags. */
export async function buildEvalJudge(
  flags: JudgeFlags,
  more: { threshold?: number; criticTemplate?: string; batch?: BatchFiles } = {},
): Promise<StepJudge> {
  if (!flags.judge) throw new UsageError('--judge <spec> is required');
  return createJudge(flags.judge, {
    providers,
    criticTemplate: more.criticTemplate,
    settings: { baseUrl: flags.baseUrl, apiKey: flags.apiKey },
    votes: flags.judgeVotes,
    threshold: more.threshold,
    seed: flags.seed,
    noCache: !flags.cache,
    storePath: flags.store,
    batch: more.batch,
    onWarning: warn,
  });
}

/** The `--critic-template` file's text, its slots checked (exit 2 naming the file). */
function readCriticTemplate(file: string | undefined, judgeSpec: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  if (!judgeSpec?.startsWith('critic:') && !judgeSpec?.startsWith('sim:critic'))
    throw new UsageError('--critic-template applies to critic judges only (--judge critic:…)');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--critic-template ${file}: cannot read it (${(e as Error).message})`);
  }
  try {
    checkCriticTemplate(text, file);
  } catch (e) {
    throw new UsageError(`--critic-template ${(e as Error).message}`);
  }
  return text;
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * What `stepwise eval processbench` does once its flags are parsed: score a predictions file, or
 * run a judge over the samples in the job harness (run record, progress, Ctrl-C, summary).
 */
export async function runEvalProcessbenchCommand(flags: EvalProcessbenchFlags): Promise<void> {
  if (flags.predictions && (flags.shard || flags.batchOut || flags.batchIn))
    throw new UsageError(
      '--shard, --batch-out and --batch-in run a judge: they go with --judge, not --predictions',
    );
  if (flags.predictions && flags.judge)
    throw new UsageError('give either --judge or --predictions, not both');
  const config = resolveProcessBenchConfig(settingsFromFlags(PROCESSBENCH_SETTINGS, { ...flags }), flagName);
  if (flags.predictions) return scorePredictionsFile(flags.predictions, flags, config);
  if (!flags.judge)
    throw new UsageError('give --judge <spec> to run a judge, or --predictions <file> to score one');
  return runProcessBenchJudge(flags, config);
}

/** `--predictions`: score a file of `{id, prediction}` rows against the data set. */
async function scorePredictionsFile(
  file: string,
  flags: EvalProcessbenchFlags,
  config: ProcessBenchConfig,
): Promise<void> {
  const dataset = await loadProcessBenchSamples({ path: flags.path, subsets: config.subsets });
  const score = scorePredictions(file, dataset);
  for (const [name, n] of Object.entries(score.missing))
    process.stderr.write(
      `note: ${name}: ${n} samples of the data set have no prediction; scored over the lines given\n`,
    );
  if (score.abstained > 0)
    process.stderr.write(`note: ${score.abstained} predictions are null (no answer): scored as misses\n`);
  process.stderr.write(`${formatScoreTable(score)}\n`);
  if (flags.json) process.stdout.write(`${JSON.stringify(scoreJson(score))}\n`);
}

/** A judge run ends with a report, or with samples that wait for batch answers. */
type JudgeRun =
  | { kind: 'report'; report: ProcessBenchReport }
  | { kind: 'pending'; done: number; pending: number; batch: ReturnType<typeof batchReport> };

async function runProcessBenchJudge(flags: EvalProcessbenchFlags, config: ProcessBenchConfig): Promise<void> {
  const out = flags.out;
  if (!out)
    throw new UsageError('--out <report.json> is required with --judge (the predictions go next to it)');
  const criticTemplate = readCriticTemplate(flags.criticTemplate, flags.judge);
  const batch = openBatchFiles(flags, flags.store);
  const judge = await buildEvalJudge(
    { ...flags, seed: config.seed },
    {
      threshold: typeof config.threshold === 'number' ? config.threshold : undefined,
      criticTemplate,
      batch,
    },
  );
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    batch?.close();
    await judge.close?.();
  };
  try {
    const threshold = thresholdModeOf(config, judge, flagName);
    if (flags.shard && threshold.mode === 'auto')
      throw new UsageError(
        `--threshold auto chooses one threshold on the whole ${threshold.subset} subset, but --shard ${flags.shard.index}/${flags.shard.count} sees only part of it: ` +
          'pass --threshold <x> (e.g. the one an unsharded run chose), or run unsharded',
      );
    // Read before any work (bad records, ids twice and simulated-world mismatches fail here), then
    // again as the judge goes: the samples are never all in memory.
    const simCheck = simWorldInputCheck(
      { judge: flags.judge },
      { guess: flags.simGuess, source: flags.path ?? 'ProcessBench' },
    );
    const samples = await scanProcessBenchSamples(
      { path: flags.path, subsets: config.subsets, limit: config.limit },
      simCheck && ((s) => simCheck({ id: s.id, question: s.problem })),
    );
    if (samples.count === 0)
      throw new UsageError('no ProcessBench samples to judge (check --path and --subsets)');
    const predictions = predictionsPathFor(out);
    const settings = processBenchJobSettings(config, {
      judge: judge.name,
      path: flags.path === undefined ? undefined : resolve(flags.path),
      // Verdict mode judges with early exit; the others score every step: the rows differ.
      earlyExit: threshold.mode === 'verdict',
      // The prompt decides the predictions: another template is another run.
      ...(criticTemplate !== undefined ? { criticTemplate } : {}),
    });
    const record = {
      judge: judge.name,
      path: flags.path ?? null,
      subsets: config.subsets ?? null,
      limit: config.limit ?? null,
      votes: config.judgeVotes ?? null,
      threshold: threshold.mode === 'fixed' ? threshold.value : threshold.mode,
      seed: config.seed,
      simulated: isSimulatedJudge(judge),
    };
    await runJobCommand<JudgeRun>({
      command: 'eval processbench',
      out: resolve(out),
      store: flags.store,
      record: { ...record, job: settings },
      quiet: flags.quiet,
      json: flags.json,
      label: `processbench${isSimulatedJudge(judge) ? ' (simulated)' : ''}`,
      cleanup: close,
      async run({ onProgress }) {
        try {
          const report = await runProcessBench({
            ...{ judge, samples, predictionsPath: predictions, threshold, votes: config.judgeVotes },
            ...{ concurrency: config.concurrency, fresh: flags.fresh, strictResume: flags.strictResume },
            onWarning: warn,
            ...{ shard: flags.shard, settings, seed: config.seed, segmentation: config.segmentation },
            onProgress,
          });
          await close();
          writeJson(out, report);
          return { kind: 'report', report };
        } catch (e) {
          if (!(batch && e instanceof ProcessBenchPendingError)) throw e;
          await close();
          // Requests wait in batch files: a later round (--batch-in) finishes the samples.
          const failed = batchOutcome(flags, batch, {
            pending: e.pending,
            unit: 'samples',
            modelId: judge.model?.modelId ?? judge.name,
            chat: true,
            rounds:
              threshold.mode === 'verdict'
                ? `--batch-out ${nextRoundFile(flags.batchOut ?? 'requests.jsonl')} (verdicts stop at the first negative chunk, so each round judges the next chunk of the samples still open)`
                : undefined,
          });
          if (failed) throw failed;
          return { kind: 'pending', done: e.done, pending: e.pending, batch: batchReport(flags, batch) };
        }
      },
      counts: (r): Record<string, number> =>
        r.kind === 'pending'
          ? { samples: r.done, pending: r.pending }
          : {
              samples: r.report.samples,
              average_f1_x100: r.report.average_f1 === null ? -1 : Math.round(r.report.average_f1 * 100),
              judge_calls: r.report.cost.judge.calls,
            },
      summary: (r, runId) => {
        if (r.kind === 'pending')
          return {
            readable: '',
            json: { run: runId, predictions, judged: r.done, pending: r.pending, batch: r.batch },
          };
        const resume = r.report.resume ? `  resume: ${resumePhrase(r.report.resume)}\n` : '';
        return {
          readable: `${formatProcessBenchReport(r.report)}\n${resume}  wrote ${out}, ${predictions} (run ${runId})\n`,
          json: r.report as unknown as Record<string, unknown>,
        };
      },
    });
  } finally {
    await close();
  }
}
