import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { SAMPLE_SETTINGS } from '../../sample/settings.js';
import { addBatchOptions } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetOptions } from '../datasets.js';
import { addRunOptions, addServerOptions } from '../option-groups.js';
import { intOption } from '../options.js';
import { runSampleCommand } from '../sample-run.js';
import { addSettingsOptions } from '../settings-options.js';
import { addSimGuessOption } from '../sim-guard.js';
import { addAlias, strictResumeOption } from '../vocabulary.js';

/** `stepwise sample`: K solutions per problem with correctness, accuracy and pass@k. */
export function register(program: Command): void {
  const cmd = program
    .command('sample')
    .description(
      'Sample K solutions per problem (one request with n=K), segment and check them, report pass@k',
    );
  addSimGuessOption(addDatasetOptions(cmd)).requiredOption(
    '--policy <spec>',
    'policy model: openai:<model>, gguf:<path|hf:URI> or sim[…] (docs/models.md)',
  );
  addSettingsOptions(cmd, SAMPLE_SETTINGS);
  addRunOptions(cmd, {
    out: 'output JSONL: one line per problem {id, gold, samples: [{text, chunks, answer, correct, tokens, finishReason}]}',
    items: 'problems',
  });
  cmd.addOption(strictResumeOption());
  addBatchOptions(addServerOptions(cmd), "the policy's")
    .option('--threads <t>', 'CPU threads for gguf models (default: all cores)', intOption('--threads', 1))
    .option('--no-cache', 'bypass the model-call cache (neither read nor written)')
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    );
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
  cmd.action(runSampleCommand);
}
