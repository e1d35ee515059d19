import type { Command } from 'commander';
import { LABEL_SETTINGS } from '../../label/config.js';
import { addBatchOptions } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetLookupOptions } from '../datasets.js';
import { runLabelCommand } from '../label-run.js';
import { addRunOptions, addServerOptions } from '../option-groups.js';
import { UNSAFE_FILESYSTEM_HELP } from '../sandbox.js';
import { addSettingsOptions } from '../settings-options.js';
import { strictResumeOption } from '../vocabulary.js';

/** `stepwise label`: Monte Carlo rollout labels for every chunk of every solution. */
export function register(program: Command): void {
  const cmd = program
    .command('label')
    .description(
      'Label each chunk of each solution from policy rollouts (Monte Carlo step values, docs/methods.md §2)',
    )
    .requiredOption(
      '--input <file>',
      'JSONL: rows {id, problem, answer, steps[]} or `stepwise sample` output',
    );
  addDatasetLookupOptions(
    cmd,
    'data set the `stepwise sample` input came from (questions and gold answers are looked up by id)',
  ).requiredOption(
    '--policy <spec>',
    'policy that continues prefixes: openai:<model>, gguf:<path>, sim[?k=v]',
  );
  addRunOptions(cmd, {
    out: 'output JSONL (resumed when it exists)',
    items: 'input',
  });
  cmd.addOption(strictResumeOption());
  addSettingsOptions(cmd, LABEL_SETTINGS);
  addBatchOptions(addServerOptions(cmd), 'the')
    .option(
      '--chat-template <file>',
      "the model's own chat template (tokenizer_config.json or .jinja), rendered client-side for raw prompts",
    )
    .option(
      '--sim-guess',
      "let a simulated policy label inputs that are not the simulated world's problems (seeded guesses)",
    )
    .option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP)
    .addHelpText(
      'after',
      '\nOutput: one line per solution with id, problem, answer, q0 (empty prefix), chunks[{text, q, rollouts (count, or\n' +
        '[{text, correct}] with --keep-rollouts),\n' +
        'labels{signal: value}}], firstError{signal: index or -1}, finalAnswerCorrect, cost{rollouts, tokens}.\n' +
        'Progress and a readable summary go to stderr; --json prints the summary as JSON on stdout. See docs/label.md.',
    );
  addConfigOption(cmd, { command: 'label', fileDigests: ['chatTemplate'] });
  cmd.action(runLabelCommand);
}
