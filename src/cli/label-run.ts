import type { Problem } from '../core/types.js';
import { assertInputRendering } from '../jobs/rendering.js';
import { flagName } from '../jobs/settings.js';
import { LABEL_SETTINGS, type LabelConfig, labelJobSettings, resolveLabelConfig } from '../label/config.js';
import { labelInputSegmentation, openLabelInput } from '../label/input.js';
import { runLabelJob } from '../label/job.js';
import { BatchPending } from '../models/batch.js';
import { cacheStatsOf } from '../models/cache.js';
import { createPolicy } from '../models/policy.js';
import { ledgerOf } from '../models/simulated.js';
import { loadChatTemplate } from '../prompts/chat-template.js';
import { defaultStorePath } from '../store/db.js';
import { checkSolution } from '../verify/check.js';
import { batchOutcome, batchReport, nextRoundFile, openBatchFiles } from './batch.js';
import { type DatasetFlags, datasetSettings, loadDatasetProblems } from './datasets.js';
import { runJobCommand } from './job-harness.js';
import { labelReport } from './job-summaries.js';
import { type RunFlags, type ServerFlags, serverOptionsOf } from './option-groups.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { assertSimWorldInputs } from './sim-guard.js';
import { warn } from './warn.js';

/** The flags: the fields of {@link LabelConfig} by name (LABEL_SETTINGS), then where the job reads, writes and reaches. */
export type LabelFlags = Partial<LabelConfig> &
  RunFlags &
  ServerFlags &
  Partial<DatasetFlags> & { input: string; policy: string; chatTemplate?: string; strictResume?: boolean } & {
    batchOut?: string;
    batchIn?: string;
    simGuess?: boolean;
  };

/**
 * What `stepwise label` does once its flags are parsed: resolve the config, open the input, make
 * the policy, and run the label job in the job harness (run record, progress, summary).
 */
export async function runLabelCommand(flags: LabelFlags): Promise<void> {
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
  // A simulated policy can only guess outside its world.
  const { solutions, plan } = openLabelInput(flags.input, {
    problems,
    segmentation,
    check: (s) =>
      assertSimWorldInputs({ policy: flags.policy }, [{ id: s.problem.id, question: s.problem.question }], {
        guess: flags.simGuess,
        source: flags.input,
      }),
  });
  const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
  assertInputRendering(flags.input, chatTemplate?.id);
  const storePath = flags.store ?? defaultStorePath();
  const batch = openBatchFiles({ ...flags, cache: config.cache !== false }, storePath);
  const model = await providers.languageModel(flags.policy, {
    ...serverOptionsOf(flags),
    batch,
    cacheMode: config.cache === false ? undefined : config.cache,
    noCache: config.cache === false,
    onWarning: warn,
  });
  const policy = createPolicy(model, { form: config.promptForm, chatTemplate, segmentation });
  // The job's world is its ledger's: what the policy model is, not the spec's spelling, and any
  // reply the sim server marked (labelSolution notes those).
  const ledger = ledgerOf(model);
  // What the rows depend on besides the config; neither the input's name nor the shard: shard
  // outputs share the settings of the whole job, so they merge and resume as one.
  const record = {
    ...(flags.dataset === undefined ? {} : datasetSettings({ ...flags, dataset: flags.dataset })),
    policy: flags.policy,
    chatTemplate: chatTemplate?.id,
  };
  const settings = labelJobSettings(config, record);
  const shard = flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {};
  await runJobCommand({
    command: 'label',
    out: flags.out,
    store: storePath,
    record: { input: flags.input, ...record, ...config, ...shard, job: settings },
    quiet: flags.quiet,
    json: flags.json,
    cleanup: () => model.close?.(),
    async run({ onProgress }) {
      const summary = await runLabelJob({
        ...{ config, record, solutions, plan, shard: flags.shard, policy, checker: checkSolution },
        ...{ out: flags.out, fresh: flags.fresh, strictResume: flags.strictResume, ledger, onProgress },
        onWarning: warn,
        isPending: (e) => e instanceof BatchPending,
      });
      batch?.close();
      const failed =
        batch &&
        batchOutcome(flags, batch, {
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
      return summary;
    },
    counts: (s) => ({
      ...{ solutions: s.solutions, chunks: s.chunks, rollouts: s.rollouts, calls: s.spent.policy.calls },
      tokens: s.spent.policy.promptTokens + s.spent.policy.completionTokens,
    }),
    summary: (s, runId) =>
      labelReport(s, {
        runId,
        simulated: ledger.simulated,
        cache: cacheStatsOf(model),
        settingsHash: settings.hash,
        batch: batch ? batchReport(flags, batch) : undefined,
      }),
  });
}
