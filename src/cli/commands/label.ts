import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Problem } from '../../core/types.js';
import { streamJsonl } from '../../jobs/lines.js';
import { resumePhrase } from '../../jobs/made-from.js';
import { assertInputRendering } from '../../jobs/rendering.js';
import { parseShard, type Shard } from '../../jobs/run-job.js';
import { flagName } from '../../jobs/settings.js';
import {
  LABEL_SETTINGS,
  type LabelConfig,
  labelJobSettings,
  resolveLabelConfig,
} from '../../label/config.js';
import { labelInputSegmentation, streamLabelInput } from '../../label/input.js';
import { type LabelSummary, runLabelJob } from '../../label/job.js';
import type { SolutionToLabel } from '../../label/label.js';
import { BatchPending } from '../../models/batch.js';
import { type CacheStats, cacheStatsOf } from '../../models/cache.js';
import { createPolicy } from '../../models/policy.js';
import { isSimulatedModel } from '../../models/simulated.js';
import { createModel } from '../../models/spec.js';
import { loadChatTemplate } from '../../prompts/chat-template.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun } from '../../store/runs.js';
import { checkSolution } from '../../verify/check.js';
import { batchOutcome, batchReport, nextRoundFile, openBatchFiles } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetLookupOptions, datasetSettings, loadDatasetProblems } from '../datasets.js';
import { baseUrlOption, jsonOption, quietOption } from '../option-groups.js';
import { intOption } from '../options.js';
import { createProgressBar, trackJobProgress } from '../progress.js';
import { UNSAFE_FILESYSTEM_HELP } from '../sandbox.js';
import { addSettingsOptions, settingsFromFlags } from '../settings-options.js';
import { assertSimWorldInputs } from '../sim-guard.js';
import { cachePhrase, type JobSummary, JSON_HELP, reportJob, SIMULATED_WORLD } from '../summary.js';
import { apiKeyOption, msOption, storeOption, strictResumeOption } from '../vocabulary.js';

/**
 * The flags: every field of {@link LabelConfig} is set by the flag of its name (`bestOf` by
 * `--best-of`), parsed to the field's type; the rest say where the job reads, writes and reaches.
 */
interface LabelFlags extends Partial<LabelConfig> {
  input: string;
  policy: string;
  out: string;
  baseUrl?: string;
  store?: string;
  chatTemplate?: string;
  fresh?: boolean;
  strictResume?: boolean;
  quiet?: boolean;
  shard?: Shard;
  batchOut?: string;
  batchIn?: string;
  simGuess?: boolean;
  dataset?: string;
  path?: string;
  split?: string;
  count?: number;
  simSeed?: number;
  json?: boolean;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  fields?: string;
}

function* mapIterable<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item);
}

/** The readable summary: rollouts, tokens, and each signal's share of positive chunks. */
function labelSummary(
  s: LabelSummary,
  simulated: boolean,
  cache: CacheStats | undefined,
  settingsHash: string,
  runId: string | number,
): JobSummary {
  return {
    command: 'label',
    headline: `${s.solutions} solutions, ${s.chunks} chunks (${resumePhrase(s)})`,
    world: simulated ? SIMULATED_WORLD : undefined,
    lines: [
      ['rollouts', `${s.rollouts} (${s.rolloutTokens} completion tokens)`],
      [
        'this run',
        `${s.spent.policy.calls} calls, ${s.spent.policy.promptTokens + s.spent.policy.completionTokens} tokens`,
      ],
      ['cache', cachePhrase(cache)],
      ...Object.entries(s.signals).map(
        ([k, v]) =>
          [
            k,
            `positives ${(100 * v.share).toFixed(1)}% of ${v.labeled} chunks; ${v.withError} solutions with a first error`,
          ] as const,
      ),
      ['settings', settingsHash],
    ],
    wrote: [s.out, ...(s.labelsFile ? [`${s.labelsFile} (full labels)`] : [])],
    run: runId,
  };
}

/** `stepwise label`: Monte Carlo rollout labels for every chunk of every solution. */
export function register(program: Command): void {
  const cmd = addDatasetLookupOptions(
    program
      .command('label')
      .description(
        'Label each chunk of each solution from policy rollouts (Monte Carlo step values, docs/methods.md §2)',
      )
      .requiredOption(
        '--input <file>',
        'JSONL: rows {id, problem, answer, steps[]} or `stepwise sample` output',
      ),
    'data set the `stepwise sample` input came from (questions and gold answers are looked up by id)',
  )
    .requiredOption(
      '--policy <spec>',
      'policy that continues prefixes: openai:<model>, gguf:<path>, sim[?k=v]',
    )
    .requiredOption('--out <file>', 'output JSONL (resumed when it exists)');
  addSettingsOptions(cmd, LABEL_SETTINGS)
    .addOption(baseUrlOption('OpenAI-compatible server(s), comma-separated (default OPENAI_BASE_URL)'))
    .addOption(apiKeyOption())
    .option('--timeout-ms <ms>', 'timeout of one HTTP request', msOption)
    .option('--max-retries <r>', 'retries of a failed request', intOption('--max-retries', 0))
    .addOption(storeOption())
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    )
    .option('--fresh', 'start over instead of resuming from --out')
    .addOption(strictResumeOption())
    .option(
      '--shard <K/N>',
      'label only part K of N of the input (by a hash of the solution id); join parts with `stepwise merge`',
      (v: string) => parseShard(v),
    )
    .option(
      '--batch-out <file>',
      'write the requests still unanswered as an OpenAI Batch API input file (for `vllm run-batch`) instead of sending them',
    )
    .option(
      '--batch-in <file>',
      'answers from a Batch API output file (the results of --batch-out); nothing is sent online',
    )
    .option(
      '--sim-guess',
      "let a simulated policy label inputs that are not the simulated world's problems (seeded guesses)",
    )
    .addOption(quietOption('no progress bar'))
    .option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP)
    .addHelpText(
      'after',
      '\nOutput: one line per solution with id, problem, answer, q0 (empty prefix), chunks[{text, q, rollouts (count, or\n' +
        '[{text, correct}] with --keep-rollouts),\n' +
        'labels{signal: value}}], firstError{signal: index or -1}, finalAnswerCorrect, cost{rollouts, tokens}.\n' +
        'Progress and a readable summary go to stderr; --json prints the summary as JSON on stdout. See docs/label.md.',
    )
    .addOption(jsonOption(JSON_HELP));
  addConfigOption(cmd, { command: 'label', fileDigests: ['chatTemplate'] });
  cmd.action(async (flags: LabelFlags) => {
    // Under tags the policy is asked for tags and prefixes are its own text: the mode comes from
    // --segmentation or from what the input was sampled with (a record that disagrees is refused).
    const config = resolveLabelConfig(settingsFromFlags(LABEL_SETTINGS, { ...flags }), {
      segmentation: labelInputSegmentation(flags.input) ?? 'paragraph',
      nameOf: flagName,
    });
    const { segmentation } = config;
    let problems: Map<string, Problem> | undefined;
    if (flags.dataset !== undefined) {
      const loaded = await loadDatasetProblems({ ...flags, dataset: flags.dataset });
      problems = new Map(loaded.map((p) => [p.id, p]));
    }
    // The input is read as the job proceeds; only its first record is looked at now.
    const first = streamJsonl(flags.input).next();
    if (first.done) throw new UsageError(`${flags.input}: no solutions to label`);
    // A simulated policy can only guess outside its world: check the first solution now, every
    // other one as the stream reaches it.
    const simGuard = (s: SolutionToLabel): SolutionToLabel => {
      assertSimWorldInputs({ policy: flags.policy }, [{ id: s.problem.id, question: s.problem.question }], {
        guess: flags.simGuess,
        source: flags.input,
      });
      return s;
    };
    const peek = streamLabelInput(flags.input, { problems, segmentation });
    const firstSolution = peek.next();
    peek.return(undefined);
    if (!firstSolution.done) simGuard(firstSolution.value);
    const solutions = mapIterable(streamLabelInput(flags.input, { problems, segmentation }), simGuard);
    const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
    assertInputRendering(flags.input, chatTemplate?.id);
    const storePath = flags.store ?? defaultStorePath();
    const batch = openBatchFiles(
      { batchOut: flags.batchOut, batchIn: flags.batchIn, cache: config.cache !== false },
      storePath,
    );
    const model = await createModel(flags.policy, {
      batch,
      cacheMode: config.cache === false ? undefined : config.cache,
      baseUrl: flags.baseUrl,
      apiKey: flags.apiKey,
      timeoutMs: flags.timeoutMs,
      maxRetries: flags.maxRetries,
      noCache: config.cache === false,
      storePath,
      onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
    });
    const policy = createPolicy(model, { form: config.promptForm, chatTemplate, segmentation });
    const db = openStore(storePath);
    // Decided by what the model is, not by the spec's spelling: a sim backend here, and any
    // sim-server reply marks the record it went into (labelSolution).
    const simulated = isSimulatedModel(model);
    // What the rows depend on besides the config: the policy, its chat template, the data set.
    // Neither the input's name nor the shard changes what a row holds: shard outputs share the
    // settings of the whole job, so they merge and resume as one.
    const record = {
      ...(flags.dataset === undefined ? {} : datasetSettings({ ...flags, dataset: flags.dataset })),
      policy: flags.policy,
      chatTemplate: chatTemplate?.id,
    };
    const settings = labelJobSettings(config, record);
    const runId = startRun(
      db,
      'label',
      {
        input: flags.input,
        ...record,
        ...config,
        ...(flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {}),
        job: settings,
      },
      flags.out,
    );
    const bar = createProgressBar('label', { quiet: flags.quiet });
    try {
      const summary = await runLabelJob({
        config,
        record,
        solutions,
        // A first pass counts the prefixes (progress) and finds rows whose input changed.
        plan: mapIterable(streamLabelInput(flags.input, { problems, segmentation }), simGuard),
        strictResume: flags.strictResume,
        onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
        shard: flags.shard,
        policy,
        checker: checkSolution,
        out: flags.out,
        fresh: flags.fresh,
        simulated,
        isPending: (e) => e instanceof BatchPending,
        onProgress: trackJobProgress(bar, db, runId),
      });
      bar.stop();
      batch?.close();
      if (batch) {
        const failed = batchOutcome(flags, batch, {
          pending: summary.pending,
          unit: 'solutions',
          modelId: model.modelId,
          chat: config.promptForm === 'chat',
          rounds:
            config.search === 'binary' || config.earlyStop !== false
              ? `--batch-out ${nextRoundFile(flags.batchOut ?? 'requests.jsonl')} (this search needs rounds: each rerun writes the next round's requests)`
              : '(add --batch-out FILE if some requests still need a round)',
        });
        if (failed) throw failed;
      }
      finishRun(db, runId, 'done', {
        solutions: summary.solutions,
        chunks: summary.chunks,
        rollouts: summary.rollouts,
        calls: summary.spent.policy.calls,
        tokens: summary.spent.policy.promptTokens + summary.spent.policy.completionTokens,
      });
      const cache = cacheStatsOf(model);
      const isSim = simulated || summary.simulated === true;
      // The settings are reported by their hash; the resolved config stays in the JSON.
      const { settings: _settings, ...reported } = summary;
      const batchInfo = batch ? { batch: batchReport(flags, batch) } : {};
      reportJob(
        labelSummary(summary, isSim, cache, settings.hash, runId),
        {
          run: runId,
          ...(isSim ? { simulated: true } : {}),
          ...reported,
          cache: cache ?? { cachedCalls: 0, calls: 0, note: 'not cached' },
          settingsHash: settings.hash,
          ...batchInfo,
        },
        flags,
      );
    } catch (e) {
      bar.stop();
      finishRun(db, runId, 'failed');
      throw e;
    } finally {
      await model.close?.();
    }
  });
}
