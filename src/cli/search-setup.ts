import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { ResumeCounts } from '../jobs/made-from.js';
import { flagName, jobSettings } from '../jobs/settings.js';
import { createJudge } from '../judge/create.js';
import { judgeReadsGold, judgeReadsGoldIfSimulated } from '../judge/spec.js';
import { cacheStatsOf } from '../models/cache.js';
import { createPolicy, type PromptForm } from '../models/policy.js';
import { ledgerOf } from '../models/simulated.js';
import { loadChatTemplate } from '../prompts/chat-template.js';
import { problemCount, type SearchJobOptions, type SearchSummary, searchDataset } from '../search/dataset.js';
import {
  DEFAULT_SEARCH_CONFIG,
  getStrategy,
  resolveSearchConfig,
  SEARCH_SETTINGS,
  type SearchConfig,
} from '../search/registry.js';
import type { SearchDeps } from '../search/types.js';
import type { Db } from '../store/db.js';
import { type DatasetFlags, datasetSettings } from './datasets.js';
import { runJobCommand } from './job-harness.js';
import { baseUrlOption } from './option-groups.js';
import { intOption } from './options.js';
import { providers } from './providers.js';
import { addSettingsOptions, settingsFromFlags } from './settings-options.js';
import { isSimSpec } from './sim-guard.js';
import { addAlias, apiKeyOption, msOption, promptFormOption, storeOption } from './vocabulary.js';
import { warn } from './warn.js';

export { isSimSpec };

/**
 * Flags shared by `solve`, `search` and `bench search`: the models, and every search setting by
 * its field's name (SEARCH_SETTINGS: the shared ones and each strategy's).
 */
export type SearchFlags = Partial<SearchConfig> & {
  policy: string;
  judge?: string;
  outcome?: string;
  baseUrl?: string;
  judgeBaseUrl?: string;
  timeoutMs?: number;
  maxRetries?: number;
  threads?: number;
  cache?: boolean;
  store?: string;
  apiKey?: string;
  promptForm: PromptForm;
  chatTemplate?: string;
  allowGoldJudge?: boolean;
};

/** Model flags: policy, judge, outcome model and how to reach them. */
export function addModelOptions(
  cmd: Command,
  options: { policyRequired?: boolean; cacheByDefault?: boolean } = {},
): Command {
  const policyHelp =
    'policy model: openai:<model> (with --base-url), gguf:<path>, or sim[?step_error=…] (simulated)';
  (options.policyRequired === false
    ? cmd.option('--policy <spec>', policyHelp)
    : cmd.requiredOption('--policy <spec>', policyHelp)
  )
    .option(
      '--judge <spec>',
      'step judge: <kind>:<model spec>, e.g. generative:openai:my-judge, sim:generative?sens=0.9',
    )
    .option(
      '--outcome <spec>',
      'outcome model for refine (ORM), e.g. orm:openai:my-orm, sim:orm (default: the step judge)',
    )
    .addOption(
      baseUrlOption(
        'OpenAI-compatible server URL(s) ending in /v1, comma-separated (default OPENAI_BASE_URL)',
      ),
    )
    .option('--judge-base-url <url>', 'server of the judge and outcome model, when not the policy server')
    .addOption(apiKeyOption())
    .option('--timeout-ms <ms>', 'timeout of one HTTP request', msOption)
    .option('--max-retries <r>', 'retries of a failed request', intOption('--max-retries', 0))
    .option('--threads <t>', 'CPU threads for gguf models', intOption('--threads', 1))
    .option(
      options.cacheByDefault === false ? '--cache' : '--no-cache',
      options.cacheByDefault === false
        ? 'use the model-call cache (cached calls then cost nothing, which understates the compute of later points)'
        : 'bypass the model-call cache (cached calls cost nothing: use this to measure compute)',
    )
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    )
    .addOption(storeOption())
    .addOption(promptFormOption())
    .option(
      '--allow-gold-judge',
      'let a judge that reads the gold answer (rollout:, a simulated orm) steer the search; every result then says so',
    );
  return addAlias(cmd, '--prompt-form', '--form');
}

/**
 * The search settings' flags, derived from SEARCH_SETTINGS (src/search/registry.ts): one per
 * field, named as the field, help with its default and, for a strategy's own, the strategy's
 * name. Unset flags are undefined: the library fills the schema's defaults.
 */
export function addStrategyOptions(cmd: Command): Command {
  addSettingsOptions(cmd, SEARCH_SETTINGS);
  // greedy-prm's budget was typed `--children` before the flag took its field's name.
  return addAlias(cmd, '--children-per-node', '--children');
}

/** The search settings the flags set (unset ones undefined: the defaults apply). */
export function strategyConfig(f: SearchFlags): Partial<SearchConfig> {
  return settingsFromFlags(SEARCH_SETTINGS, f);
}

/**
 * The search config of the flags, resolved and checked before any work: an error names the flag
 * (`--positive-at` without `--negative-below`, say).
 */
export function checkedStrategyConfig(f: SearchFlags): SearchConfig {
  return resolveSearchConfig(strategyConfig(f), flagName);
}

/**
 * The search settings a run records: the ones set (a default left out, as search always recorded
 * them), and the segmentation even when defaulted (its flag had a default, so every file records it).
 */
export function recordedStrategyConfig(f: SearchFlags): Partial<SearchConfig> {
  return {
    ...definedFields(strategyConfig(f)),
    segmentation: f.segmentation ?? DEFAULT_SEARCH_CONFIG.segmentation,
  };
}

/** Only the fields that are set (for printing and run records). */
export function definedFields<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Recorded search settings whose flag has another name: `--config` sets these flags from them. */
export const SEARCH_SETTING_FLAGS: Readonly<Record<string, string>> = {
  form: 'promptForm',
};

/**
 * What the rows of a search over a data set depend on: the data set, the models, the prompt form
 * and every strategy knob (set or defaulted); not concurrency, endpoints or timeouts.
 */
export function searchSettings(
  command: string,
  f: SearchFlags & DatasetFlags,
  extra: Record<string, unknown> = {},
): ReturnType<typeof jobSettings> {
  return jobSettings(command, {
    ...datasetSettings(f),
    policy: f.policy,
    judge: f.judge,
    outcome: f.outcome,
    form: f.promptForm,
    chatTemplate: f.chatTemplate ? loadChatTemplate(f.chatTemplate).id : undefined,
    ...recordedStrategyConfig(f),
    ...extra,
  });
}

/**
 * {@link searchDataset} recorded in the store as a `search` run through the job harness (which
 * alone owns run records), so `stepwise runs` and the web view see it: started once the output is
 * known to be resumable (a refused rerun leaves no run), its counts updated as problems finish,
 * done or failed at the end. Prints nothing. `runConfig`: what else the run record says (the flags).
 */
export async function recordedSearch(
  store: Db,
  options: SearchJobOptions,
  runConfig: Record<string, unknown> = {},
): Promise<{ summary: SearchSummary; runId: string; items: number } & ResumeCounts> {
  return runJobCommand({
    command: 'search',
    db: store,
    out: options.out,
    quiet: true,
    startWhenResumable: true,
    record: {
      strategy: options.strategy,
      config: options.config ?? {},
      problems: problemCount(options),
      ...runConfig,
      ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}),
      ...(options.settings ? { job: options.settings } : {}),
    },
    run: async (job) => {
      const result = await searchDataset({
        ...options,
        onStart: () => {
          options.onStart?.();
          job.onStart();
        },
        onProgress: (p) => {
          options.onProgress?.(p);
          job.onProgress(p);
        },
      });
      return { ...result, runId: job.runId };
    },
    counts: ({ summary }) => ({
      problems: summary.problems,
      correct: summary.correct,
      accuracy: summary.accuracy,
      policyTokens: summary.cost.policy.promptTokens + summary.cost.policy.completionTokens,
      judgeTokens: summary.cost.judge.promptTokens + summary.cost.judge.completionTokens,
    }),
  });
}

/** Build policy, judge and outcome model from the flags. `close()` releases them. */
export async function buildSearchDeps(
  f: SearchFlags,
  strategies: readonly string[],
): Promise<{
  deps: SearchDeps;
  /** Calls the model-call cache answered, over policy, judge and outcome model (undefined: nothing cached). */
  cacheStats: () => ReturnType<typeof cacheStatsOf>;
  /** Policy, judge or outcome model is the simulated world (however it was reached). */
  simulated: boolean;
  close: () => Promise<void>;
}> {
  const needsJudge = strategies.some((s) => getStrategy(s).needsJudge);
  if (needsJudge && !f.judge)
    throw new UsageError(
      `strategy ${strategies.find((s) => getStrategy(s).needsJudge)} needs a judge: pass --judge <spec>`,
    );
  // A judge that reads the gold answer turns search into an oracle: refuse unless asked for.
  const gold = [
    ...(f.judge && needsJudge ? [['--judge', f.judge]] : []),
    ...(f.outcome && strategies.includes('refine') ? [['--outcome', f.outcome]] : []),
  ].filter(([, spec]) => judgeReadsGold(spec));
  if (gold.length > 0 && !f.allowGoldJudge)
    throw new UsageError(
      `${gold.map(([flag, spec]) => `${flag} ${spec}`).join(' and ')} reads the gold answer (a rollout judge checks ` +
        'its rollouts against it; a simulated outcome model knows whether the answer is right; the simulated ' +
        'oracle PRM, prm=oracle, reads exact values), so the search ' +
        'it steers is an oracle, not a test of search. Pass --allow-gold-judge to run it anyway: every result ' +
        'then says judgeUsedGold: true.',
    );
  const settings = { timeoutMs: f.timeoutMs, maxRetries: f.maxRetries, apiKey: f.apiKey, threads: f.threads };
  const common = { storePath: f.store, noCache: f.cache !== true, onWarning: warn };
  const model = await providers.languageModel(f.policy, {
    ...common,
    settings: { ...settings, baseUrl: f.baseUrl },
  });
  const judgeOptions = {
    ...common,
    providers,
    settings: { ...settings, baseUrl: f.judgeBaseUrl ?? f.baseUrl },
  };
  const judge = f.judge && needsJudge ? await createJudge(f.judge, judgeOptions) : undefined;
  const outcome =
    f.outcome && strategies.includes('refine') ? await createJudge(f.outcome, judgeOptions) : undefined;
  return {
    deps: {
      policy: createPolicy(model, {
        form: f.promptForm,
        segmentation: f.segmentation ?? 'paragraph',
        chatTemplate: f.chatTemplate ? loadChatTemplate(f.chatTemplate) : undefined,
      }),
      judge,
      outcome,
      ...(gold.length > 0 ? { judgeUsedGold: true } : {}),
      // An outcome model is gold-reading when the sim server answers it, whatever its spec says.
      goldIfSimulated: [
        ...(judge && f.judge && judgeReadsGoldIfSimulated(f.judge) ? [judge] : []),
        ...(outcome && f.outcome && judgeReadsGoldIfSimulated(f.outcome) ? [outcome] : []),
      ],
      allowGoldJudge: f.allowGoldJudge === true,
    },
    cacheStats: () => cacheStatsOf(model, judge?.model, outcome?.model),
    // The models' worlds, as their ledger says before any reply: what they are, not the specs'
    // spelling (sim-server replies mark their records and the runtime's ledger too).
    simulated: ledgerOf(model, judge?.model, outcome?.model).simulated,
    close: async () => {
      await model.close?.();
      await judge?.close?.();
      await outcome?.close?.();
    },
  };
}
