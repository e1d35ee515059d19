import { type Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Segmentation } from '../../core/segment.js';
import type { Problem } from '../../core/types.js';
import { countLines, streamJsonl } from '../../jobs/lines.js';
import { assertInputRendering } from '../../jobs/rendering.js';
import { parseShard, type Shard } from '../../jobs/run-job.js';
import { jobSettings } from '../../jobs/settings.js';
import { labelInputSegmentation, streamLabelInput } from '../../label/input.js';
import { type LabelOutputFormat, type LabelSummary, runLabelJob } from '../../label/job.js';
import { type SearchMode, type SolutionToLabel, validateLabelOptions } from '../../label/label.js';
import {
  defaultRollouts,
  LABEL_SIGNALS,
  type LabelSignal,
  parseSignals,
  type ZeroOverZero,
} from '../../label/signals.js';
import { BatchPending } from '../../models/batch.js';
import { type CacheStats, cacheStatsOf } from '../../models/cache.js';
import { createPolicy, type PromptForm } from '../../models/policy.js';
import { isSimulatedModel } from '../../models/simulated.js';
import { createModel } from '../../models/spec.js';
import { loadChatTemplate } from '../../prompts/chat-template.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun } from '../../store/runs.js';
import { checkSolution } from '../../verify/check.js';
import { batchOutcome, batchReport, nextRoundFile, openBatchFiles } from '../batch.js';
import { addDatasetLookupOptions, datasetSettings, loadDatasetProblems } from '../datasets.js';
import { floatOption, intOption, segmentationOption } from '../options.js';
import { createProgressBar, trackJobProgress } from '../progress.js';
import { UNSAFE_FILESYSTEM_HELP } from '../sandbox.js';
import { assertSimWorldInputs } from '../sim-guard.js';
import { cachePhrase, type JobSummary, JSON_HELP, reportJob, SIMULATED_WORLD } from '../summary.js';
import {
  apiKeyOption,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TEMPERATURE,
  msOption,
  promptFormOption,
  storeOption,
} from '../vocabulary.js';

interface LabelFlags {
  input: string;
  policy: string;
  rollouts?: number;
  signals: string;
  out: string;
  gamma: number;
  alpha: number;
  bestOf: number;
  softThreshold: number;
  zeroOverZero: ZeroOverZero;
  search: SearchMode;
  earlyStop?: number | true;
  seed: number;
  temperature: number;
  maxTokens: number;
  concurrency: number;
  baseUrl?: string;
  cache: 'full' | 'verdicts' | false;
  store?: string;
  promptForm: PromptForm;
  chatTemplate?: string;
  format: LabelOutputFormat;
  processbenchSignal?: string;
  fresh?: boolean;
  keepRollouts?: boolean;
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
  segmentation?: Segmentation;
  json?: boolean;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  fields?: string;
}

function signalsOption(value: string): string {
  try {
    parseSignals(value);
  } catch (e) {
    throw new UsageError(`--signals: ${(e as Error).message}`);
  }
  return value;
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
    headline: `${s.solutions} solutions, ${s.chunks} chunks (${s.resumed} resumed)`,
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
  addDatasetLookupOptions(
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
    .requiredOption('--out <file>', 'output JSONL (resumed when it exists)')
    .option(
      '--rollouts <M>',
      "rollouts per prefix (default: the papers' — 16 (StepWiser) when any of abs-q, rel-ratio, rel-effective is asked, else 8 (Math-Shepherd N = 8, SORM K = 8))",
      intOption('--rollouts', 1),
    )
    .option(
      '--signals <list>',
      `comma-separated signals: ${LABEL_SIGNALS.join(', ')}`,
      signalsOption,
      'abs-q,rel-ratio,rel-effective',
    )
    .option('--gamma <g>', 'rel-ratio: positive iff Q̂(i)/Q̂(i−1) > γ', floatOption('--gamma', 0), 0.8)
    .option('--alpha <a>', 'rel-effective: weight α of the best-of-n advantage', floatOption('--alpha'), 0.4)
    .option('--best-of <n>', 'rel-effective: best-of-n prover size n', intOption('--best-of', 1), 4)
    .option(
      '--soft-threshold <t>',
      'ms-soft: Q̂ at or above which a chunk counts as positive for its first error',
      floatOption('--soft-threshold', 0, 1),
      0.5,
    )
    .addOption(
      new Option(
        '--zero-over-zero <rule>',
        'rel-ratio when Q̂(i) = Q̂(i−1) = 0: negative, or ratio 1 (no-change)',
      )
        .choices(['negative', 'no-change'])
        .default('negative'),
    )
    .addOption(
      new Option(
        '--search <mode>',
        'linear: every prefix; binary: bisect for the first error (abs-q, ms-hard, sorm)',
      )
        .choices(['linear', 'binary'])
        .default('linear'),
    )
    .option(
      '--early-stop [batch]',
      'stop a prefix at its first correct rollout, sampling batches of this size (default 4; abs-q, ms-hard, sorm only)',
      intOption('--early-stop', 1),
    )
    .option(
      '--seed <s>',
      'run seed (rollouts of a prefix depend only on it and the prefix)',
      intOption('--seed', 0),
      0,
    )
    .option('--temperature <t>', 'rollout temperature', floatOption('--temperature', 0), DEFAULT_TEMPERATURE)
    .option(
      '--max-tokens <n>',
      'token budget of one rollout',
      intOption('--max-tokens', 1),
      DEFAULT_MAX_TOKENS,
    )
    .option(
      '--concurrency <n>',
      'solutions labeled at once (4× as many requests in flight)',
      intOption('--concurrency', 1),
      8,
    )
    .option('--base-url <url>', 'OpenAI-compatible server(s), comma-separated (default OPENAI_BASE_URL)')
    .addOption(apiKeyOption())
    .option('--timeout-ms <ms>', 'timeout of one HTTP request', msOption)
    .option('--max-retries <r>', 'retries of a failed request', intOption('--max-retries', 0))
    .addOption(
      new Option(
        '--cache <mode>',
        'what the model-call cache keeps of each rollout: full (text), or verdicts (answer and token count only; a much smaller cache)',
      )
        .choices(['full', 'verdicts'])
        .default('full'),
    )
    .option('--no-cache', 'do not read or write the model-call cache')
    .addOption(storeOption())
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    )
    .addOption(promptFormOption('policy prompt form (chat messages continue an assistant turn)'))
    .addOption(
      new Option(
        '--format <format>',
        'jsonl: labeled solutions; processbench: {id, generator, problem, steps, label, final_answer_correct}',
      )
        .choices(['jsonl', 'processbench'])
        .default('jsonl'),
    )
    .option(
      '--processbench-signal <signal>',
      'signal whose first error is the ProcessBench label (default: first of --signals)',
    )
    .option(
      '--keep-rollouts',
      'keep every rollout in the output: chunks[].rollouts = [{text, correct}] (the continuations from the prefix ending after the chunk; emptyPrefixRollouts for the bare problem)',
    )
    .addOption(
      segmentationOption(
        "how the policy segments (default: what the input was sampled with, else paragraph); under tags, prefixes are the policy's own text up to a </chunk>",
      ),
    )
    .option('--fresh', 'start over instead of resuming from --out')
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
    .option('--quiet', 'no progress bar')
    .option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP)
    .addHelpText(
      'after',
      '\nOutput: one line per solution with id, problem, answer, q0 (empty prefix), chunks[{text, q, rollouts (count, or\n' +
        '[{text, correct}] with --keep-rollouts),\n' +
        'labels{signal: value}}], firstError{signal: index or -1}, finalAnswerCorrect, cost{rollouts, tokens}.\n' +
        'Progress and a readable summary go to stderr; --json prints the summary as JSON on stdout. See docs/label.md.',
    )
    .option('--json', JSON_HELP)
    .action(async (flags: LabelFlags) => {
      const signals = parseSignals(flags.signals);
      const rollouts = flags.rollouts ?? defaultRollouts(signals);
      let pbSignal: LabelSignal | undefined;
      if (flags.processbenchSignal !== undefined) {
        try {
          [pbSignal] = parseSignals(flags.processbenchSignal);
        } catch (e) {
          throw new UsageError(`--processbench-signal: ${(e as Error).message}`);
        }
      }
      let problems: Map<string, Problem> | undefined;
      if (flags.dataset !== undefined) {
        const loaded = await loadDatasetProblems({ ...flags, dataset: flags.dataset });
        problems = new Map(loaded.map((p) => [p.id, p]));
      }
      validateLabelOptions({
        signals,
        rollouts,
        search: flags.search,
        earlyStop: flags.earlyStop !== undefined,
        params: { gamma: flags.gamma, alpha: flags.alpha, bestOfN: flags.bestOf },
      });
      if (pbSignal !== undefined && flags.format === 'processbench' && !signals.includes(pbSignal))
        throw new UsageError(`--processbench-signal ${pbSignal} is not among --signals ${signals.join(',')}`);
      // The input is read as the job proceeds; only its first record is looked at now.
      const first = streamJsonl(flags.input).next();
      if (first.done) throw new UsageError(`${flags.input}: no solutions to label`);
      const firstValue = first.value.value as { samples?: unknown } | null;
      // One solution per line unless the input is `stepwise sample` output (several per line).
      const total =
        flags.shard === undefined && !Array.isArray(firstValue?.samples)
          ? countLines(flags.input)
          : undefined;
      // Under tags the policy is asked for tags and prefixes are its own text: the mode comes from
      // --segmentation or from what the input was sampled with (a record that disagrees is refused).
      const segmentation: Segmentation =
        flags.segmentation ?? labelInputSegmentation(flags.input) ?? 'paragraph';
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
      if (flags.cache === 'verdicts' && flags.keepRollouts)
        throw new UsageError(
          '--keep-rollouts needs rollout texts: use --cache full (verdicts keeps answers only)',
        );
      const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
      assertInputRendering(flags.input, chatTemplate?.id);
      const storePath = flags.store ?? defaultStorePath();
      const batch = openBatchFiles(
        { batchOut: flags.batchOut, batchIn: flags.batchIn, cache: flags.cache !== false },
        storePath,
      );
      const model = await createModel(flags.policy, {
        batch,
        cacheMode: flags.cache === false ? undefined : flags.cache,
        baseUrl: flags.baseUrl,
        apiKey: flags.apiKey,
        timeoutMs: flags.timeoutMs,
        maxRetries: flags.maxRetries,
        noCache: !flags.cache,
        storePath,
        onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
      });
      const policy = createPolicy(model, { form: flags.promptForm, chatTemplate, segmentation });
      const db = openStore(storePath);
      // Decided by what the model is, not by the spec's spelling: a sim backend here, and any
      // sim-server reply marks the record it went into (labelSolution).
      const simulated = isSimulatedModel(model);
      const config = {
        input: flags.input,
        policy: flags.policy,
        rollouts,
        signals,
        gamma: flags.gamma,
        alpha: flags.alpha,
        bestOf: flags.bestOf,
        softThreshold: flags.softThreshold,
        zeroOverZero: flags.zeroOverZero,
        search: flags.search,
        earlyStop: flags.earlyStop ?? false,
        seed: flags.seed,
        temperature: flags.temperature,
        maxTokens: flags.maxTokens,
        promptForm: flags.promptForm,
        format: flags.format,
        keepRollouts: flags.keepRollouts ?? false,
        processbenchSignal: pbSignal,
        ...(flags.cache === 'verdicts' ? { cache: 'verdicts' } : {}),
        ...(flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {}),
        chatTemplate: chatTemplate?.id,
        segmentation,
      };
      // Neither the input's name, the shard nor the cache mode changes what a row holds: shard
      // outputs share the settings of the whole job, so they merge and resume as one.
      const { input: _input, shard: _shard, cache: _cache, ...rowSettings } = config;
      const settings = jobSettings('label', {
        ...(flags.dataset === undefined ? {} : datasetSettings({ ...flags, dataset: flags.dataset })),
        ...rowSettings,
      });
      const runId = startRun(db, 'label', { ...config, job: settings }, flags.out);
      const bar = createProgressBar('label', { quiet: flags.quiet });
      try {
        const summary = await runLabelJob({
          solutions,
          total,
          shard: flags.shard,
          policy,
          segmentation,
          checker: checkSolution,
          out: flags.out,
          signals,
          params: {
            gamma: flags.gamma,
            alpha: flags.alpha,
            bestOfN: flags.bestOf,
            softThreshold: flags.softThreshold,
            zeroOverZero: flags.zeroOverZero,
          },
          search: flags.search,
          rollouts,
          earlyStop:
            flags.earlyStop === undefined
              ? false
              : { batchSize: flags.earlyStop === true ? 4 : flags.earlyStop },
          seed: flags.seed,
          temperature: flags.temperature,
          maxTokens: flags.maxTokens,
          concurrency: flags.concurrency,
          noCache: !flags.cache,
          format: flags.format,
          processbenchSignal: pbSignal,
          fresh: flags.fresh,
          keepRollouts: flags.keepRollouts ?? false,
          simulated,
          settings,
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
            chat: flags.promptForm === 'chat',
            rounds:
              flags.search === 'binary' || flags.earlyStop !== undefined
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
        const batchInfo = batch ? { batch: batchReport(flags, batch) } : {};
        reportJob(
          labelSummary(summary, isSim, cache, settings.hash, runId),
          {
            run: runId,
            ...(isSim ? { simulated: true } : {}),
            ...summary,
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
