import type { Shard } from '../jobs/run-job.js';
import { methodJobSettings } from '../jobs/settings.js';
import { createPolicy } from '../models/policy.js';
import { isSimulatedModel } from '../models/simulated.js';
import { loadChatTemplate } from '../prompts/chat-template.js';
import { defaultStorePath } from '../store/db.js';
import { type CorrectContinuationFinder, exportTrainingData, formatForOut } from '../train/export.js';
import { EXPORT_SETTINGS, type ExportSettings } from '../train/export-settings.js';
import { checkMathAnswer } from '../verify/check.js';
import { runJobCommand } from './job-harness.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { DEFAULT_TEMPERATURE } from './vocabulary.js';

/** The flags: the fields of {@link ExportSettings} by name, then the files and the policy. */
export type ExportFlags = Partial<ExportSettings> & {
  input: string;
  out: string;
  policy?: string;
  baseUrl?: string;
  apiKey?: string;
  store?: string;
  chatTemplate?: string;
  shard?: Shard;
  quiet?: boolean;
  json?: boolean;
};

/**
 * What `stepwise export` does once its flags are parsed: resolve the settings, make the policy
 * refine-local may sample, and build the training set in the job harness (run record with its
 * settings, Ctrl-C, summary and `--json`).
 */
export async function runExportCommand(flags: ExportFlags): Promise<void> {
  const given = settingsFromFlags(EXPORT_SETTINGS, { ...flags });
  const settings = EXPORT_SETTINGS.parse(
    Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
  );
  const format = formatForOut(flags.out, settings.format);
  const chatTemplate = flags.chatTemplate ? loadChatTemplate(flags.chatTemplate) : undefined;
  const storePath = flags.store ?? defaultStorePath();
  const model = flags.policy
    ? await providers.languageModel(flags.policy, {
        settings: { baseUrl: flags.baseUrl, apiKey: flags.apiKey },
        storePath,
      })
    : undefined;
  let findContinuation: CorrectContinuationFinder | undefined;
  if (model) {
    // The simulated world reads stepwise's own prompts, not a real model's rendering of them:
    // it is asked in chat form, while the rows are still rendered with the template.
    const policyTemplate = isSimulatedModel(model) ? undefined : chatTemplate;
    findContinuation = async (question, gold, prefix) => {
      // Asked as the label file's policy was (its segmentation), continuing its own prefix text.
      const policy = createPolicy(model, { chatTemplate: policyTemplate, segmentation: prefix.segmentation });
      const result = await policy.continue(question, prefix.text, {
        n: settings.attempts,
        temperature: DEFAULT_TEMPERATURE,
        maxTokens: settings.maxTokens,
        seed: settings.seed,
      });
      const good = result.samples.find((s) => checkMathAnswer(gold, prefix.text + s.text).correct);
      return good ? good.text : null;
    };
  }
  // What the rows depend on: the schema's settings (the format as resolved from --out), the
  // policy that samples continuations and the chat template's digest. Not the files' names.
  const job = methodJobSettings(
    'export',
    EXPORT_SETTINGS,
    { ...settings, format },
    {
      policy: flags.policy,
      chatTemplate: chatTemplate?.id,
    },
  );
  const shard = flags.shard ? { shard: `${flags.shard.index}/${flags.shard.count}` } : {};
  await runJobCommand({
    command: 'export',
    out: flags.out,
    store: storePath,
    record: { input: flags.input, ...job.settings, ...shard, job },
    quiet: flags.quiet,
    json: flags.json,
    cleanup: () => model?.close?.(),
    run: ({ onProgress }) =>
      exportTrainingData({
        from: flags.input,
        task: settings.task,
        format,
        out: flags.out,
        signal: settings.signal,
        seed: settings.seed,
        maxPromptTokens: settings.maxPromptTokens,
        noBalance: !settings.balance,
        promptKey: settings.promptKey,
        labelKey: settings.labelKey,
        dataSource: settings.dataSource,
        split: settings.split,
        findContinuation,
        chatTemplate,
        shard: flags.shard,
        onProgress,
      }),
    counts: (s) => ({ rows: s.rows }),
    summary: (s) => ({
      readable: {
        command: 'export',
        headline: `${s.rows} ${s.task} rows as ${s.format}${s.signal ? ` (signal ${s.signal})` : ''}${s.shard ? `, part ${s.shard}` : ''}`,
        lines: [
          ...Object.entries(s.stats ?? {}).map(([k, v]) => [k, String(v)] as const),
          // SORM balancing, per prefix length: what was found and what balancing kept.
          ...Object.entries(s.byPrefixLength ?? {}).map(
            ([length, b]) =>
              [
                `prefix length ${length}`,
                `${b.positive} positive, ${b.negative} negative → kept ${b.kept}, dropped ${b.dropped}`,
              ] as const,
          ),
        ],
        wrote: [s.out],
      },
      json: { ...s },
    }),
  });
}
