import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Segmentation } from '../../core/segment.js';
import { chunkRowsPath, evaluateChunks, readLabeledSolutions } from '../../evaluate/chunks.js';
import {
  loadProcessBenchSamples,
  ProcessBenchPendingError,
  type ProcessBenchReport,
  runProcessBench,
  scanProcessBenchSamples,
  scoreJson,
  scorePredictions,
  type ThresholdMode,
} from '../../evaluate/processbench.js';
import { formatProcessBenchReport, formatScoreTable } from '../../evaluate/table.js';
import { resumePhrase } from '../../jobs/made-from.js';
import type { Shard } from '../../jobs/run-job.js';
import { jobSettings } from '../../jobs/settings.js';
import { createJudge } from '../../judge/create.js';
import { JUDGE_KIND_HELP } from '../../judge/spec.js';
import type { StepJudge } from '../../judge/types.js';
import { LABEL_SIGNALS, type LabelSignal } from '../../label/signals.js';
import type { BatchFiles } from '../../models/batch.js';
import { checkCriticTemplate } from '../../prompts/critic.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun, updateRunCounts } from '../../store/runs.js';
import { addBatchOptions, batchOutcome, batchReport, nextRoundFile, openBatchFiles } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { baseUrlOption, jsonOption, quietOption, seedOption } from '../option-groups.js';
import { addInputOption, intOption, segmentationOption, shardOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import { assertSimWorldInputs, simWorldInputCheck } from '../sim-guard.js';
import { reportJob } from '../summary.js';
import { addAlias, apiKeyOption, storeOption, strictResumeOption } from '../vocabulary.js';

interface JudgeFlags {
  judge?: string;
  judgeVotes?: number;
  baseUrl?: string;
  apiKey?: string;
  concurrency: number;
  seed: number;
  cache: boolean;
  store?: string;
  quiet?: boolean;
  json?: boolean;
  simGuess?: boolean;
}

interface ProcessBenchFlags extends JudgeFlags {
  predictions?: string;
  path?: string;
  subsets?: string;
  limit?: number;
  threshold?: string;
  thresholdSubset: string;
  out?: string;
  fresh?: boolean;
  strictResume?: boolean;
  criticTemplate?: string;
  segmentation?: Segmentation;
  shard?: Shard;
  batchOut?: string;
  batchIn?: string;
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

interface ChunksFlags extends JudgeFlags {
  input: string;
  signal: string;
  out?: string;
  segmentation?: Segmentation;
}

const JUDGE_SPEC_HELP = `\nJudge specs (<kind>:<model spec>[?options]; see docs/judges.md):\n${Object.entries(
  JUDGE_KIND_HELP,
)
  .map(([k, v]) => `  ${k.padEnd(11)} ${v}`)
  .join('\n')}\nModel specs: openai:<served model> (with --base-url), gguf:<file>, sim[?k=v] (simulated).\n`;

/** `<out>.json` → `<out>.predictions.jsonl`, next to the report. */
export function predictionsPathFor(out: string): string {
  return `${out.replace(/\.json$/i, '')}.predictions.jsonl`;
}

function parseThreshold(value: string | undefined, judge: StepJudge, subset: string): ThresholdMode {
  if (value === undefined) return judge.scalar ? { mode: 'auto', subset } : { mode: 'verdict' };
  if (value === 'auto') {
    if (!judge.scalar)
      throw new UsageError(
        `--threshold auto tunes scalar judges (prm, shepherd, rollout); ${judge.name} gives verdicts: ` +
          'omit --threshold, or give a number to set its vote-share threshold',
      );
    return { mode: 'auto', subset };
  }
  const t = Number(value);
  if (value.trim() === '' || !Number.isFinite(t))
    throw new UsageError(`--threshold must be auto or a number, got "${value}"`);
  return judge.scalar ? { mode: 'fixed', value: t } : { mode: 'verdict' };
}

async function buildJudge(
  flags: JudgeFlags,
  threshold?: number,
  criticTemplate?: string,
  batch?: BatchFiles,
): Promise<StepJudge> {
  if (!flags.judge) throw new UsageError('--judge <spec> is required');
  const warned = new Set<string>();
  return createJudge(flags.judge, {
    criticTemplate,
    baseUrl: flags.baseUrl,
    apiKey: flags.apiKey,
    votes: flags.judgeVotes,
    threshold,
    seed: flags.seed,
    noCache: !flags.cache,
    storePath: flags.store,
    batch,
    onWarning: (m) => {
      if (!warned.has(m)) process.stderr.write(`warning: ${m}\n`);
      warned.add(m);
    },
  });
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

async function scoreFile(flags: ProcessBenchFlags): Promise<void> {
  const subsets = flags.subsets
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const dataset = await loadProcessBenchSamples({ path: flags.path, subsets });
  const score = scorePredictions(flags.predictions!, dataset);
  for (const [name, n] of Object.entries(score.missing))
    process.stderr.write(
      `note: ${name}: ${n} samples of the data set have no prediction; scored over the lines given\n`,
    );
  if (score.abstained > 0)
    process.stderr.write(`note: ${score.abstained} predictions are null (no answer): scored as misses\n`);
  process.stderr.write(`${formatScoreTable(score)}\n`);
  if (flags.json) process.stdout.write(`${JSON.stringify(scoreJson(score))}\n`);
}

async function runJudge(flags: ProcessBenchFlags): Promise<void> {
  if (!flags.out)
    throw new UsageError('--out <report.json> is required with --judge (the predictions go next to it)');
  const numeric =
    flags.threshold !== undefined && flags.threshold !== 'auto' ? Number(flags.threshold) : undefined;
  const criticTemplate = readCriticTemplate(flags.criticTemplate, flags.judge);
  const batch = openBatchFiles(flags, flags.store);
  const judge = await buildJudge(
    flags,
    numeric !== undefined && Number.isFinite(numeric) ? numeric : undefined,
    criticTemplate,
    batch,
  );
  const threshold = parseThreshold(flags.threshold, judge, flags.thresholdSubset);
  if (flags.shard && threshold.mode === 'auto')
    throw new UsageError(
      `--threshold auto chooses one threshold on the whole ${threshold.subset} subset, but --shard ${flags.shard.index}/${flags.shard.count} sees only part of it: ` +
        'pass --threshold <x> (e.g. the one an unsharded run chose), or run unsharded',
    );
  const subsets = flags.subsets
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // Read before any work (bad records, ids twice and simulated-world mismatches fail here), then
  // again as the judge goes: the samples are never all in memory.
  const simCheck = simWorldInputCheck(
    { judge: flags.judge },
    { guess: flags.simGuess, source: flags.path ?? 'ProcessBench' },
  );
  const samples = await scanProcessBenchSamples(
    { path: flags.path, subsets, limit: flags.limit },
    simCheck && ((s) => simCheck({ id: s.id, question: s.problem })),
  );
  if (samples.count === 0)
    throw new UsageError('no ProcessBench samples to judge (check --path and --subsets)');
  const predictions = predictionsPathFor(flags.out);
  const db = openStore(flags.store ?? defaultStorePath());
  const config = {
    judge: judge.name,
    path: flags.path ?? null,
    subsets: subsets ?? null,
    limit: flags.limit ?? null,
    votes: flags.judgeVotes ?? null,
    threshold: threshold.mode === 'fixed' ? threshold.value : threshold.mode,
    seed: flags.seed,
    simulated: judge.simulated ?? false,
  };
  const settings = jobSettings('eval processbench', {
    judge: judge.name,
    path: flags.path === undefined ? undefined : resolve(flags.path),
    votes: flags.judgeVotes,
    seed: flags.seed,
    // Verdict mode judges with early exit; the others score every step: the rows differ.
    earlyExit: threshold.mode === 'verdict',
    // The prompt decides the predictions: another template is another run.
    ...(criticTemplate !== undefined ? { criticTemplate } : {}),
    ...(flags.segmentation === 'tags' ? { segmentation: 'tags' } : {}),
  });
  const runId = startRun(db, 'eval processbench', { ...config, job: settings }, resolve(flags.out));
  const bar = createProgressBar(`processbench${judge.simulated ? ' (simulated)' : ''}`, {
    quiet: flags.quiet,
  });
  let lastCount = 0;
  let report: ProcessBenchReport;
  try {
    report = await runProcessBench({
      judge,
      samples,
      predictionsPath: predictions,
      threshold,
      votes: flags.judgeVotes,
      concurrency: flags.concurrency,
      fresh: flags.fresh,
      strictResume: flags.strictResume,
      onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
      shard: flags.shard,
      settings,
      seed: flags.seed,
      segmentation: flags.segmentation,
      onProgress: (p) => {
        bar.update(p.done, p.total);
        // Keep the run record's progress fresh for `stepwise runs` without a write per sample.
        if (p.done - lastCount >= 50 || p.done === p.total) {
          lastCount = p.done;
          updateRunCounts(db, runId, { done: p.done, total: p.total, resumed: p.resumed });
        }
      },
    });
  } catch (e) {
    bar.stop();
    batch?.close();
    if (batch && e instanceof ProcessBenchPendingError) {
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
      finishRun(db, runId, failed ? 'failed' : 'done', { samples: e.done, pending: e.pending });
      if (failed) throw failed;
      if (flags.json)
        process.stdout.write(
          `${JSON.stringify({ run: runId, predictions, judged: e.done, pending: e.pending, batch: batchReport(flags, batch) })}\n`,
        );
      return;
    }
    finishRun(db, runId, 'failed');
    throw e;
  } finally {
    await judge.close?.();
  }
  bar.stop();
  batch?.close();
  writeJson(flags.out, report);
  finishRun(db, runId, 'done', {
    samples: report.samples,
    average_f1_x100: report.average_f1 === null ? -1 : Math.round(report.average_f1 * 100),
    judge_calls: report.cost.judge.calls,
  });
  process.stderr.write(`${formatProcessBenchReport(report)}\n`);
  if (report.resume) process.stderr.write(`  resume: ${resumePhrase(report.resume)}\n`);
  process.stderr.write(`  wrote ${flags.out}, ${predictions} (run ${runId})\n`);
  if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
}

async function runChunks(flags: ChunksFlags): Promise<void> {
  if (!(LABEL_SIGNALS as readonly string[]).includes(flags.signal))
    throw new UsageError(`--signal must be one of ${LABEL_SIGNALS.join(', ')} (got "${flags.signal}")`);
  const signal = flags.signal as LabelSignal;
  const solutions = readLabeledSolutions(flags.input, signal);
  assertSimWorldInputs(
    { judge: flags.judge },
    solutions.map((s) => ({ id: s.id, question: s.problem.question })),
    { guess: flags.simGuess, source: flags.input },
  );
  if (solutions.length === 0) throw new UsageError(`${flags.input}: no labelled solutions`);
  // The judge sees a solution's chunks as the policy wrote them: asking for another
  // segmentation than the labels were made under would judge chunks the policy never wrote.
  const labeledWith = solutions[0].segmentation ?? 'paragraph';
  const mixed = solutions.findIndex((s) => (s.segmentation ?? 'paragraph') !== labeledWith);
  if (mixed >= 0)
    throw new UsageError(`${flags.input}: solutions labeled under both paragraph and tags segmentation`);
  if (flags.segmentation !== undefined && flags.segmentation !== labeledWith)
    throw new UsageError(
      `${flags.input} was labeled with --segmentation ${labeledWith}, not ${flags.segmentation}: judge it as it was labeled`,
    );
  const segmentation = flags.segmentation ?? labeledWith;
  const judge = await buildJudge(flags);
  const bar = createProgressBar(`eval chunks${judge.simulated ? ' (simulated)' : ''}`, {
    quiet: flags.quiet,
  });
  const db = openStore(flags.store ?? defaultStorePath());
  const runId = startRun(
    db,
    'eval chunks',
    { judge: judge.name, labels: resolve(flags.input), signal, segmentation },
    flags.out,
  );
  try {
    const report = await evaluateChunks({
      judge,
      solutions,
      signal,
      votes: flags.judgeVotes,
      concurrency: flags.concurrency,
      segmentation,
      onProgress: (p) => bar.update(p.done, p.total),
      // Per-chunk judge vs label rows beside the report (the web view shows them with the calibration plot).
      ...(flags.out ? { rowsPath: chunkRowsPath(flags.out) } : {}),
    });
    bar.stop();
    finishRun(db, runId, 'done', { solutions: report.solutions, chunks: report.n });
    if (flags.out) writeJson(flags.out, report);
    const r = (v: number | null) => (v === null ? '—' : `${(100 * v).toFixed(1)}%`);
    reportJob(
      {
        command: 'eval chunks',
        headline: `judge ${report.judge} vs ${signal} labels: ${report.n} chunks of ${report.solutions} solutions compared`,
        world: report.simulated ? 'SIMULATED judge — not a real model' : undefined,
        lines: [
          ...(report.notice ? [['notice', report.notice] as const] : []),
          [
            'chunks',
            `${report.positives} positive, ${report.negatives} negative; the judge abstained on ${report.abstained}`,
          ],
          ['accuracy', r(report.accuracy)],
          ['balanced acc.', r(report.balanced_accuracy)],
          ['recall (+)', r(report.recall_positive)],
          ['recall (−)', r(report.recall_negative)],
          [
            'first error',
            `${r(report.first_error_accuracy)} of solutions: predicted first error = labelled one`,
          ],
          [
            'format fails',
            `${report.formatFailures} of ${report.replies} judge replies (${(100 * report.formatFailureRate).toFixed(1)}%); first error left open on ${report.abstainedSolutions} solutions`,
          ],
          [
            'calibration',
            report.calibration.gap === null
              ? 'no chunk has both a judge score and a Q̂'
              : `mean |judge score − Q̂| ${report.calibration.gap.toFixed(3)} over ${report.calibration.n} chunks (10 score bins in the report)`,
          ],
          [
            'judge cost',
            `${report.cost.judge.calls} calls, ${report.cost.judge.promptTokens + report.cost.judge.completionTokens} tokens`,
          ],
        ],
        wrote: flags.out ? [flags.out, chunkRowsPath(flags.out)] : [],
        run: runId,
      },
      report,
      flags,
    );
  } catch (e) {
    bar.stop();
    finishRun(db, runId, 'failed');
    throw e;
  } finally {
    await judge.close?.();
  }
}

function judgeOptions(cmd: Command): Command {
  cmd
    .option(
      '--judge <spec>',
      'judge spec: <kind>:<model spec>[?options] (kinds below) (required, unless --predictions)',
    )
    .option(
      '--judge-votes <k>',
      'votes per chunk (generative, orm) or samples voted on (critic, default 8)',
      intOption('--judge-votes', 1),
    )
    .addOption(
      baseUrlOption('OpenAI-compatible server(s) of the judge, comma-separated (default OPENAI_BASE_URL)'),
    )
    .addOption(apiKeyOption())
    .option('--concurrency <c>', 'solutions judged at once', intOption('--concurrency', 1), 16)
    .addOption(seedOption('seed of the judge requests (sampled votes reproduce)', { min: 0, default: 0 }))
    .option('--no-cache', 'do not read or write the model-call cache')
    .addOption(storeOption())
    .addOption(quietOption('no progress bar'))
    .option(
      '--sim-guess',
      "let a simulated judge judge inputs that are not the simulated world's problems (seeded guesses)",
    )
    .addOption(
      jsonOption('also print the report as one JSON object on stdout (the readable one goes to stderr)'),
    );
  return addAlias(cmd, '--judge-votes', '--votes');
}

/** `stepwise eval`: ProcessBench and chunk-level judge evaluation. */
export function register(program: Command): void {
  const evalCmd = program
    .command('eval')
    .description('Evaluate judges: ProcessBench first-error detection, chunk agreement with rollout labels');

  const processbench = addBatchOptions(
    judgeOptions(
      evalCmd
        .command('processbench')
        .description(
          'Score a judge on ProcessBench (official error_acc / correct_acc / F1), or score a predictions file',
        ),
    ),
    "the judge's",
  )
    .option(
      '--predictions <file>',
      'score this JSONL of {id, prediction} rows instead of running a judge (required, unless --judge)',
    )
    .option(
      '--path <dir>',
      'ProcessBench folder (gsm8k.json, …) or one ProcessBench-format file (default $STEPWISE_DATA/processbench)',
    )
    .option('--subsets <list>', 'comma-separated subsets (default gsm8k,math,olympiadbench,omnimath)')
    .option(
      '--limit <n>',
      'n samples per subset, spread evenly over each file (both classes kept)',
      intOption('--limit', 1),
    )
    .option(
      '--threshold <auto|x>',
      'scalar judges: auto (max F1 on --threshold-subset, the default) or a score threshold',
    )
    .option('--threshold-subset <name>', 'subset on which --threshold auto is chosen', 'gsm8k')
    .option('--out <report.json>', 'report file; predictions go to <report>.predictions.jsonl (resumable)')
    .option('--fresh', 'start over instead of resuming the predictions file')
    .addOption(strictResumeOption())
    .addOption(shardOption('samples'))
    .option(
      '--critic-template <file>',
      'critic judges: prompt template with {problem} and {tagged_response} slots, sent verbatim (e.g. the official ProcessBench one; default: our own wording)',
    )
    .addOption(
      segmentationOption(
        'how a generative judge is shown earlier steps (default paragraph: [Step i] blocks; tags: as <chunk>s, for steps a policy wrote in tags)',
      ),
    )
    .addHelpText(
      'after',
      `${JUDGE_SPEC_HELP}\nExamples:\n  stepwise eval processbench --judge prm:openai:Qwen/Qwen2.5-Math-PRM-7B --base-url http://127.0.0.1:8000/v1 --out pb.json\n` +
        '  stepwise eval processbench --judge critic:sim --out sim-critic.json     (simulated: not a real model)\n' +
        '  stepwise eval processbench --predictions preds.jsonl --json\n',
    )
    .action(async (flags: ProcessBenchFlags) => {
      if (flags.predictions && (flags.shard || flags.batchOut || flags.batchIn))
        throw new UsageError(
          '--shard, --batch-out and --batch-in run a judge: they go with --judge, not --predictions',
        );
      if (flags.predictions && flags.judge)
        throw new UsageError('give either --judge or --predictions, not both');
      if (flags.predictions) return scoreFile(flags);
      if (!flags.judge)
        throw new UsageError('give --judge <spec> to run a judge, or --predictions <file> to score one');
      return runJudge(flags);
    });
  addConfigOption(processbench, {
    command: 'eval processbench',
    renames: { votes: 'judgeVotes' },
    fileDigests: ['criticTemplate'],
    // Whether the judge stopped at its first error follows from the judge and --threshold.
    adapt: ({ earlyExit: _earlyExit, ...rest }) => rest,
  });

  const chunks = judgeOptions(
    evalCmd
      .command('chunks')
      .description(
        "A judge's per-chunk accuracy, balanced accuracy and per-class recall against rollout labels",
      ),
  );
  addInputOption(chunks, '`stepwise label` output (JSONL: chunks[{text, labels{signal}}])', ['labels'])
    .requiredOption('--signal <s>', `label signal to compare with: ${LABEL_SIGNALS.join(', ')}`)
    .option('--out <report.json>', 'also write the report here')
    .addOption(
      segmentationOption(
        "how the judge is shown earlier chunks (default: the label file's; tags: as the policy's <chunk>s)",
      ),
    )
    .addHelpText('after', JUDGE_SPEC_HELP)
    .action((flags: ChunksFlags) => runChunks(flags));
}
