import { resolve } from 'node:path';
import type { LanguageModel } from '../core/model.js';
import { resumePhrase } from '../jobs/made-from.js';
import { flagName } from '../jobs/settings.js';
import { BatchPending } from '../models/batch.js';
import { cacheStatsOf } from '../models/cache.js';
import { innerModel } from '../models/middleware.js';
import { failuresPhrase, OpenAIModel } from '../models/openai.js';
import { createPolicy } from '../models/policy.js';
import { ledgerOf } from '../models/simulated.js';
import { loadChatTemplate } from '../prompts/chat-template.js';
import {
  resolveSampleConfig,
  SAMPLE_SETTINGS,
  type SampleConfig,
  sampleJobSettings,
  sampleSegmentation,
} from '../sample/config.js';
import { runSampleJobSummary } from '../sample/sample.js';
import { defaultStorePath } from '../store/db.js';
import { batchOutcome, batchReport, openBatchFiles } from './batch.js';
import { type DatasetFlags, datasetSettings, policyForDataset, scanDatasetProblems } from './datasets.js';
import { runJobCommand } from './job-harness.js';
import type { RunFlags } from './option-groups.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { simWorldInputCheck } from './sim-guard.js';
import { cachePhrase, SIMULATED_WORLD, share } from './summary.js';
import { warn } from './warn.js';

/** The flags: the fields of {@link SampleConfig} by name (SAMPLE_SETTINGS), then where the job reads, writes and reaches. */
export type SampleFlags = Partial<SampleConfig> &
  RunFlags &
  DatasetFlags & {
    policy: string;
    baseUrl?: string;
    apiKey?: string;
    timeoutMs?: number;
    maxRetries?: number;
    threads?: number;
    cache: boolean;
    strictResume?: boolean;
    batchOut?: string;
    batchIn?: string;
    chatTemplate?: string;
    store?: string;
    simGuess?: boolean;
  };

function endpointCount(model: LanguageModel): number {
  const inner = innerModel(model);
  return inner instanceof OpenAIModel ? inner.endpoints.endpoints.length : 1;
}

/**
 * What `stepwise sample` does once its flags are parsed: resolve the config, scan the data set,
 * make the policy, and run the sample job in the job harness (run record, progress in problems,
 * Ctrl-C that keeps every finished problem, summary).
 */
export async function runSampleCommand(flags: SampleFlags): Promise<void> {
  const config = resolveSampleConfig(settingsFromFlags(SAMPLE_SETTINGS, { ...flags }), flagName);
  // A bad policy spec fails before the dataset is read.
  providers.parse(flags.policy);
  // Read once before any work (bad records and simulated-world mismatches fail here), then
  // again as the job goes: the problems are never all in memory.
  const dataset = await scanDatasetProblems(
    flags,
    simWorldInputCheck({ policy: flags.policy }, { guess: flags.simGuess, source: flags.dataset }),
  );
  const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
  const storePath = flags.store ?? defaultStorePath();
  const batch = openBatchFiles(flags, flags.store);
  const model = await providers.languageModel(flags.policy, {
    batch,
    settings: {
      baseUrl: flags.baseUrl,
      concurrency: config.concurrency,
      timeoutMs: flags.timeoutMs,
      apiKey: flags.apiKey,
      maxRetries: flags.maxRetries,
      threads: flags.threads,
    },
    storePath: flags.store,
    noCache: !flags.cache,
    onWarning: warn,
  });
  // The job's world is its ledger's: what the policy model is, not the spec's spelling, and any
  // reply the sim server marked (sampleProblem notes those).
  const ledger = ledgerOf(model);
  const { segmentation, segmentBy } = sampleSegmentation(config.segmentation);
  const { policy, pose } = policyForDataset(
    dataset,
    createPolicy(model, { form: config.promptForm, chatTemplate, segmentation }),
    { form: config.promptForm },
  );
  async function* problems() {
    for await (const p of dataset.read()) yield pose(p);
  }
  const out = resolve(flags.out);
  const settings = sampleJobSettings(config, {
    ...datasetSettings(flags),
    policy: flags.policy,
    chatTemplate: chatTemplate?.id,
  });
  const shard = flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {};
  let server: ReturnType<OpenAIModel['stats']> | undefined;
  await runJobCommand({
    command: 'sample',
    out,
    store: storePath,
    record: { ...flags, ...config, out, problems: dataset.count, job: settings },
    quiet: flags.quiet,
    json: flags.json,
    stopsOnInterrupt: true,
    total: dataset.count,
    cleanup: () => model.close?.(),
    async run({ onProgress, signal }) {
      const summary = await runSampleJobSummary({
        problems: problems(),
        plan: problems(),
        total: dataset.count,
        policy,
        n: config.n,
        out,
        maxTokens: config.maxTokens,
        temperature: config.temperature,
        topP: config.topP,
        seed: config.seed,
        // --concurrency is per endpoint: keep every endpoint busy.
        concurrency: config.concurrency * endpointCount(model),
        segmentBy,
        ledger,
        segmentation,
        fresh: flags.fresh,
        strictResume: flags.strictResume,
        shard: flags.shard,
        isPending: (e) => e instanceof BatchPending,
        settings,
        noCache: !flags.cache,
        signal,
        onWarning: warn,
        onProgress,
      });
      signal?.throwIfAborted();
      batch?.close();
      if (batch) {
        const failed = batchOutcome(flags, batch, {
          pending: summary.pending ?? 0,
          unit: 'problems',
          modelId: innerModel(model).modelId,
          chat: config.promptForm === 'chat',
        });
        if (failed) throw failed;
      }
      const inner = innerModel(model);
      server = inner instanceof OpenAIModel ? inner.stats() : undefined;
      return summary;
    },
    counts: (s) => ({
      problems: s.problems,
      samples: s.samples,
      correct: Math.round(s.accuracy * s.samples),
    }),
    summary: (s, runId) => {
      const cache = cacheStatsOf(model);
      // From the ledger: a sim policy however reached, and resumed lines that say so.
      const isSim = ledger.simulated;
      const json = {
        run: runId,
        policy: flags.policy,
        ...(isSim ? { simulated: true } : {}),
        dataset: flags.dataset,
        segmentation,
        out,
        ...s,
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
        ...shard,
        ...(batch ? { batch: batchReport(flags, batch) } : {}),
      };
      const passAt = Object.entries(s.passAtK)
        .map(([k, v]) => `${k} ${(100 * v).toFixed(1)}%`)
        .join(', ');
      const correct = Math.round(s.accuracy * s.samples);
      return {
        json,
        readable: {
          command: 'sample',
          headline: `${s.problems} problems × ${s.samplesPerProblem} samples (${s.cachedProblems} problems wholly from the cache)`,
          world: isSim ? SIMULATED_WORLD : undefined,
          lines: [
            ['accuracy', `${share(correct, s.samples)} of samples correct; ${passAt}`],
            ['no answer', `${s.noAnswer} samples; ${s.truncated} cut at --max-tokens`],
            [
              'tokens',
              `${s.tokens.completion} completion (${s.tokens.meanPerSample.toFixed(0)} per sample), ${s.tokens.prompt} prompt`,
            ],
            [
              'chunks',
              `${s.chunksPerSolution.toFixed(1)} per solution (--segmentation ${config.segmentation})${s.brokenTags ? `; ${s.brokenTags} samples with broken tags` : ''}`,
            ],
            ...(server
              ? [
                  [
                    'requests',
                    `${server.calls} calls, ${server.retries} retries, ${failuresPhrase(server.failures)}`,
                  ] as [string, string],
                ]
              : []),
            ['cache', cachePhrase(cache)],
            ['resume', resumePhrase(s)],
            ['settings', settings.hash],
          ],
          wrote: [out],
          run: runId,
        },
      };
    },
  });
}
