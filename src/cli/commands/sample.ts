import { setMaxListeners } from 'node:events';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { StepwiseError, UsageError } from '../../core/errors.js';
import type { LanguageModel } from '../../core/model.js';
import type { Segmentation } from '../../core/segment.js';
import { resumePhrase } from '../../jobs/made-from.js';
import type { Shard } from '../../jobs/run-job.js';
import { jobSettings } from '../../jobs/settings.js';
import { BatchPending } from '../../models/batch.js';
import { type CachedModel, cacheStatsOf } from '../../models/cache.js';
import { failuresPhrase, OpenAIModel } from '../../models/openai.js';
import { createPolicy, type PromptForm } from '../../models/policy.js';
import { createModel, parseModelSpec } from '../../models/registry.js';
import { isSimulatedModel } from '../../models/simulated.js';
import { loadChatTemplate } from '../../prompts/chat-template.js';
import { runSampleJobSummary } from '../../sample/sample.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { finishRun, startRun } from '../../store/runs.js';
import { addBatchOptions, batchOutcome, batchReport, openBatchFiles } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import {
  addDatasetOptions,
  type DatasetFlags,
  datasetSettings,
  policyForDataset,
  scanDatasetProblems,
} from '../datasets.js';
import { baseUrlOption, jsonOption, quietOption, seedOption } from '../option-groups.js';
import { floatOption, intOption, shardOption } from '../options.js';
import { createProgressBar, trackJobProgress } from '../progress.js';
import { addSimGuessOption, simWorldInputCheck } from '../sim-guard.js';
import { cachePhrase, JSON_HELP, reportJob, SIMULATED_WORLD, share } from '../summary.js';
import {
  addAlias,
  apiKeyOption,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TEMPERATURE,
  msOption,
  promptFormOption,
  storeOption,
  strictResumeOption,
} from '../vocabulary.js';

interface SampleFlags extends DatasetFlags {
  policy: string;
  n: number;
  maxTokens: number;
  temperature: number;
  topP?: number;
  seed?: number;
  concurrency: number;
  baseUrl?: string;
  timeoutMs?: number;
  maxRetries?: number;
  threads?: number;
  cache: boolean;
  fresh?: boolean;
  strictResume?: boolean;
  shard?: Shard;
  batchOut?: string;
  batchIn?: string;
  promptForm: PromptForm;
  chatTemplate?: string;
  segmentation: 'paragraph' | 'steps' | 'lines' | 'tags';
  store?: string;
  apiKey?: string;
  out: string;
  quiet?: boolean;
  simGuess?: boolean;
  json?: boolean;
}

function unwrap(model: LanguageModel): LanguageModel {
  return (model as Partial<CachedModel>).inner ?? model;
}

function endpointCount(model: LanguageModel): number {
  const inner = unwrap(model);
  return inner instanceof OpenAIModel ? inner.endpoints.endpoints.length : 1;
}

/** `stepwise sample`: K solutions per problem with correctness, accuracy and pass@k. */
export function register(program: Command): void {
  const cmd = program
    .command('sample')
    .description(
      'Sample K solutions per problem (one request with n=K), segment and check them, report pass@k',
    );
  addSimGuessOption(addDatasetOptions(cmd))
    .requiredOption(
      '--policy <spec>',
      'policy model: openai:<model>, gguf:<path|hf:URI> or sim[…] (docs/models.md)',
    )
    .requiredOption('--n <k>', 'samples per problem', intOption('--n', 1))
    .option(
      '--max-tokens <t>',
      'max completion tokens per sample',
      intOption('--max-tokens', 1),
      DEFAULT_MAX_TOKENS,
    )
    .option(
      '--temperature <t>',
      'sampling temperature',
      floatOption('--temperature', 0, 10),
      DEFAULT_TEMPERATURE,
    )
    .option('--top-p <p>', 'nucleus sampling mass', floatOption('--top-p', 0, 1))
    .addOption(seedOption('run seed: each problem gets a seed derived from it and its id', { min: 0 }))
    .option(
      '--concurrency <c>',
      'requests in flight per endpoint (problems in flight: this × endpoints)',
      intOption('--concurrency', 1),
      16,
    )
    .addOption(
      baseUrlOption(
        'OpenAI-compatible server URL(s) ending in /v1, comma-separated (default OPENAI_BASE_URL)',
      ),
    )
    .option('--timeout-ms <ms>', 'timeout of one HTTP request', msOption)
    .option(
      '--max-retries <r>',
      'retries of a failed request before giving up',
      intOption('--max-retries', 0),
    )
    .option('--threads <t>', 'CPU threads for gguf models (default: all cores)', intOption('--threads', 1))
    .option('--no-cache', 'bypass the model-call cache (neither read nor written)')
    .option('--fresh', 'start the output over instead of resuming it')
    .addOption(strictResumeOption())
    .addOption(shardOption('problems'));
  addBatchOptions(cmd, "the policy's")
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    )
    .addOption(promptFormOption('prompt form'))
    .addOption(
      new Option(
        '--segmentation <mode>',
        'how samples are split into chunks: paragraph (blank lines), steps ("Step k:" markers), lines, or tags (the policy is asked to wrap each chunk in <chunk>…</chunk>)',
      )
        .choices(['paragraph', 'steps', 'lines', 'tags'])
        .default('paragraph'),
    )
    .addOption(storeOption())
    .addOption(apiKeyOption())
    .requiredOption(
      '--out <file>',
      'output JSONL: one line per problem {id, gold, samples: [{text, chunks, answer, correct, tokens, finishReason}]}',
    )
    .addOption(quietOption('no progress bar'))
    .addOption(jsonOption(JSON_HELP))
    .action(async (flags: SampleFlags) => {
      const spec = parseModelSpec(flags.policy);
      // Read once before any work (bad records and simulated-world mismatches fail here), then
      // again as the job goes: the problems are never all in memory.
      const dataset = await scanDatasetProblems(
        flags,
        simWorldInputCheck({ policy: flags.policy }, { guess: flags.simGuess, source: flags.dataset }),
      );
      const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
      const warn = (m: string): void => {
        process.stderr.write(`stepwise: warning: ${m}\n`);
      };
      const batch = openBatchFiles(flags, flags.store);
      const model = await createModel(flags.policy, {
        batch,
        baseUrl: flags.baseUrl,
        concurrency: flags.concurrency,
        timeoutMs: flags.timeoutMs,
        apiKey: flags.apiKey,
        storePath: flags.store,
        maxRetries: flags.maxRetries,
        threads: flags.threads,
        noCache: !flags.cache,
        onWarning: warn,
      });
      // Decided by what the model is, not by the spec's spelling: a sim backend here, and any
      // sim-server reply marks its own record (sampleProblem).
      const simulated = isSimulatedModel(model);
      // Under tags the policy segments; otherwise its text is split by paragraphs, steps or lines.
      const segmentation: Segmentation = flags.segmentation === 'tags' ? 'tags' : 'paragraph';
      const segmentBy = flags.segmentation === 'tags' ? 'paragraph' : flags.segmentation;
      const { policy, pose } = policyForDataset(
        dataset,
        createPolicy(model, { form: flags.promptForm, chatTemplate, segmentation }),
        { form: flags.promptForm },
      );
      async function* problems() {
        for await (const p of dataset.read()) yield pose(p);
      }
      const out = resolve(flags.out);
      const db = openStore(flags.store ?? defaultStorePath());
      const settings = jobSettings('sample', {
        ...datasetSettings(flags),
        policy: flags.policy,
        n: flags.n,
        maxTokens: flags.maxTokens,
        temperature: flags.temperature,
        topP: flags.topP,
        seed: flags.seed,
        form: flags.promptForm,
        chatTemplate: chatTemplate?.id,
        segmentBy,
        segmentation,
      });
      const config = { ...flags, out, problems: dataset.count, job: settings };
      const runId = startRun(db, 'sample', config, out);
      const bar = createProgressBar('sample', { quiet: flags.quiet });
      // Ctrl-C: stop sending, mark the run failed, say how to resume (finished problems are kept).
      const interrupt = new AbortController();
      // One signal is shared by every request in flight (each adds an abort listener).
      setMaxListeners(1_000_000, interrupt.signal);
      const onSigint = (): void => interrupt.abort();
      process.once('SIGINT', onSigint);
      const track = trackJobProgress(bar, db, runId);
      let progress = { done: 0, total: dataset.count, resumed: 0 };
      try {
        const summary = await runSampleJobSummary({
          problems: problems(),
          plan: problems(),
          total: dataset.count,
          policy,
          n: flags.n,
          out,
          maxTokens: flags.maxTokens,
          temperature: flags.temperature,
          topP: flags.topP,
          seed: flags.seed,
          // --concurrency is per endpoint: keep every endpoint busy.
          concurrency: flags.concurrency * endpointCount(model),
          segmentBy,
          simulated,
          segmentation,
          fresh: flags.fresh,
          strictResume: flags.strictResume,
          shard: flags.shard,
          isPending: (e) => e instanceof BatchPending,
          settings,
          noCache: !flags.cache,
          signal: interrupt.signal,
          onWarning: warn,
          onProgress: (p) => {
            progress = p;
            track(p);
          },
        });
        interrupt.signal.throwIfAborted();
        bar.stop();
        batch?.close();
        if (batch) {
          const failed = batchOutcome(flags, batch, {
            pending: summary.pending ?? 0,
            unit: 'problems',
            modelId: unwrap(model).modelId,
            chat: flags.promptForm === 'chat',
          });
          if (failed) throw failed;
        }
        const inner = unwrap(model);
        const server = inner instanceof OpenAIModel ? inner.stats() : undefined;
        finishRun(db, runId, 'done', {
          problems: summary.problems,
          samples: summary.samples,
          correct: Math.round(summary.accuracy * summary.samples),
        });
        const cache = cacheStatsOf(model);
        const report = {
          run: runId,
          policy: flags.policy,
          // The sim server takes its spec as the model name: label those runs too.
          ...(simulated || spec.provider === 'sim' || summary.simulated === true ? { simulated: true } : {}),
          dataset: flags.dataset,
          segmentation,
          out,
          ...summary,
          ...(server
            ? {
                requests: {
                  calls: server.calls,
                  retries: server.retries,
                  failures: server.failures,
                  promptTokens: server.promptTokens,
                  completionTokens: server.completionTokens,
                },
              }
            : {}),
          // How many calls the cache answered (none: the model is not cached, e.g. sim or --no-cache).
          cache: cache ?? { cachedCalls: 0, calls: 0, note: 'not cached' },
          settingsHash: settings.hash,
          ...(flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {}),
          ...(batch ? { batch: batchReport(flags, batch) } : {}),
        };
        const passAt = Object.entries(summary.passAtK)
          .map(([k, v]) => `${k} ${(100 * v).toFixed(1)}%`)
          .join(', ');
        reportJob(
          {
            command: 'sample',
            headline: `${summary.problems} problems × ${summary.samplesPerProblem} samples (${summary.cachedProblems} problems wholly from the cache)`,
            world: report.simulated ? SIMULATED_WORLD : undefined,
            lines: [
              [
                'accuracy',
                `${share(Math.round(summary.accuracy * summary.samples), summary.samples)} of samples correct; ${passAt}`,
              ],
              ['no answer', `${summary.noAnswer} samples; ${summary.truncated} cut at --max-tokens`],
              [
                'tokens',
                `${summary.tokens.completion} completion (${summary.tokens.meanPerSample.toFixed(0)} per sample), ${summary.tokens.prompt} prompt`,
              ],
              [
                'chunks',
                `${summary.chunksPerSolution.toFixed(1)} per solution (--segmentation ${flags.segmentation})${summary.brokenTags ? `; ${summary.brokenTags} samples with broken tags` : ''}`,
              ],
              ...(server
                ? [
                    [
                      'requests',
                      `${server.calls} calls, ${server.retries} retries, ${failuresPhrase(server.failures)}`,
                    ] as const,
                  ]
                : []),
              ['cache', cachePhrase(cache)],
              ['resume', resumePhrase(summary)],
              ['settings', settings.hash],
            ],
            wrote: [out],
            run: runId,
          },
          report,
          flags,
        );
      } catch (err) {
        bar.stop();
        finishRun(db, runId, interrupt.signal.aborted ? 'interrupted' : 'failed', { ...progress });
        if (interrupt.signal.aborted)
          throw new StepwiseError(`interrupted: rerun the same command to finish the rest of ${out}`, {
            exitCode: 130,
          });
        throw err;
      } finally {
        process.removeListener('SIGINT', onSigint);
        await model.close?.();
      }
    });
  addAlias(cmd, '--prompt-form', '--form');
  // The old pair --segmentation paragraph --segment-by X is now --segmentation X.
  addAlias(cmd, '--segmentation', '--segment-by', {
    merge: (given, old) => {
      if (given !== 'paragraph')
        throw new UsageError(
          '--segment-by goes with --segmentation paragraph: under tags the policy segments',
        );
      return old;
    },
  });
  addConfigOption(cmd, {
    command: 'sample',
    renames: { form: 'promptForm' },
    fileDigests: ['chatTemplate'],
    // --segmentation X is recorded as the policy's segmentation (tags or paragraph) and how its
    // paragraphs are split (segmentBy): one flag again.
    adapt: ({ segmentBy, ...rest }) =>
      rest.segmentation === 'tags' || segmentBy === undefined ? rest : { ...rest, segmentation: segmentBy },
  });
}
