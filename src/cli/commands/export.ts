import type { Command } from 'commander';
import { createModel } from '../../models/index.js';
import { createPolicy } from '../../models/policy.js';
import { isSimulatedModel } from '../../models/simulated.js';
import { loadChatTemplate } from '../../prompts/chat-template.js';
import {
  EXPORT_FORMATS,
  EXPORT_TASKS,
  type ExportFormat,
  type ExportTask,
  exportTrainingData,
  formatForOut,
} from '../../train/export.js';
import { checkMathAnswer } from '../../verify/check.js';
import { baseUrlOption, jsonOption, seedOption } from '../option-groups.js';
import { addInputOption, choiceOption, intOption, shardOption } from '../options.js';
import { JSON_HELP, reportJob } from '../summary.js';
import { apiKeyOption, DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, storeOption } from '../vocabulary.js';

export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description('Write training data for verl, OpenRLHF or TRL from label or sample files');
  addInputOption(
    cmd,
    'input: `stepwise label` output (judge-rl, prm, sorm, refine-local), `stepwise sample` output (refine-global), or `stepwise segment --segmentation llm` output / {id, problem, text, tagged} rows (selfseg)',
    ['from'],
  )
    .requiredOption(
      '--task <task>',
      `what to build: ${EXPORT_TASKS.join(' | ')}`,
      choiceOption('--task', EXPORT_TASKS),
    )
    .option(
      '--format <format>',
      `output format: ${EXPORT_FORMATS.join(' | ')} (verl writes Parquet, the others JSONL; default verl when --out ends in .parquet; a format that does not match the --out extension is refused)`,
      choiceOption('--format', EXPORT_FORMATS),
    )
    .requiredOption('--out <path>', 'output file')
    .option(
      '--signal <signal>',
      'label signal to train on (e.g. rel-effective, rel-ratio, abs-q, sorm); default: sorm for sorm, else the first in the file',
    )
    .addOption(seedOption('seed for down-sampling and pairing', { default: 0 }))
    .option(
      '--max-prompt-tokens <n>',
      'judge-rl: drop prompts longer than this (estimated tokens)',
      intOption('--max-prompt-tokens', 1),
      2048,
    )
    .option('--no-balance', 'judge-rl: keep the natural class balance instead of down-sampling to 50/50')
    .option('--prompt-key <key>', 'openrlhf: key of the prompt field (its --input_key)')
    .option('--label-key <key>', 'openrlhf: key of the label / target field (its --label_key)')
    .option('--data-source <name>', 'verl: data_source value (default stepwise/<task>)')
    .option('--split <name>', 'verl: extra_info.split value', 'train')
    .option(
      '--policy <spec>',
      'refine-local: policy that samples a correct continuation where the label file kept none (label --keep-rollouts) (sim, gguf:PATH, openai:MODEL)',
    )
    .addOption(baseUrlOption('for openai: policies (or OPENAI_BASE_URL)'))
    .addOption(apiKeyOption())
    .addOption(storeOption())
    .option(
      '--chat-template <file>',
      "refine-local: the model's own chat template (tokenizer_config.json or .jinja); TRL rows are rendered with it, and the policy's prompts too",
    )
    .option(
      '--attempts <n>',
      'refine-local: continuations sampled per bad solution (one request with n)',
      intOption('--attempts', 1),
      16,
    )
    .option(
      '--max-tokens <n>',
      'refine-local: max tokens per continuation',
      intOption('--max-tokens', 1),
      DEFAULT_MAX_TOKENS,
    )
    .addOption(
      shardOption('input records (solutions, sample rows, segmented texts); balancing is within the part'),
    )
    .addOption(jsonOption(JSON_HELP))
    .action(async (o) => {
      let findContinuation: Parameters<typeof exportTrainingData>[0]['findContinuation'];
      let close: (() => Promise<void>) | undefined;
      const chatTemplate = o.chatTemplate ? loadChatTemplate(o.chatTemplate) : undefined;
      if (o.policy) {
        const model = await createModel(o.policy, {
          baseUrl: o.baseUrl,
          apiKey: o.apiKey,
          storePath: o.store,
        });
        close = () => model.close?.() ?? Promise.resolve();
        // The simulated world reads stepwise's own prompts, not a real model's rendering of them:
        // it is asked in chat form, while the rows are still rendered with the template.
        const policyTemplate = isSimulatedModel(model) ? undefined : chatTemplate;
        findContinuation = async (question, gold, prefix) => {
          // Asked as the label file's policy was (its segmentation), continuing its own prefix text.
          const policy = createPolicy(model, {
            chatTemplate: policyTemplate,
            segmentation: prefix.segmentation,
          });
          const result = await policy.continue(question, prefix.text, {
            n: o.attempts,
            temperature: DEFAULT_TEMPERATURE,
            maxTokens: o.maxTokens,
            seed: o.seed,
          });
          const good = result.samples.find((s) => checkMathAnswer(gold, prefix.text + s.text).correct);
          return good ? good.text : null;
        };
      }
      try {
        const summary = await exportTrainingData({
          from: o.input,
          task: o.task as ExportTask,
          format: formatForOut(o.out, o.format as ExportFormat | undefined),
          out: o.out,
          signal: o.signal,
          seed: o.seed,
          maxPromptTokens: o.maxPromptTokens,
          noBalance: o.balance === false,
          promptKey: o.promptKey,
          labelKey: o.labelKey,
          dataSource: o.dataSource,
          split: o.split,
          findContinuation,
          chatTemplate,
          shard: o.shard,
        });
        reportJob(
          {
            command: 'export',
            headline: `${summary.rows} ${summary.task} rows as ${summary.format}${summary.signal ? ` (signal ${summary.signal})` : ''}${summary.shard ? `, part ${summary.shard}` : ''}`,
            lines: [
              ...Object.entries(summary.stats ?? {}).map(([k, v]) => [k, String(v)] as const),
              // SORM balancing, per prefix length: what was found and what balancing kept.
              ...Object.entries(summary.byPrefixLength ?? {}).map(
                ([length, b]) =>
                  [
                    `prefix length ${length}`,
                    `${b.positive} positive, ${b.negative} negative → kept ${b.kept}, dropped ${b.dropped}`,
                  ] as const,
              ),
            ],
            wrote: [summary.out],
          },
          summary,
          o,
        );
      } finally {
        await close?.();
      }
    });
}
