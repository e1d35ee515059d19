import type { Command } from 'commander';
import { LABEL_CODE_SETTINGS } from '../../code/settings.js';
import { addConfigOption } from '../config-file.js';
import { LABEL_CODE_DATASETS, runLabelCodeCommand } from '../label-code-run.js';
import { addRunOptions } from '../option-groups.js';
import { choiceOption, intOption } from '../options.js';
import { UNSAFE_FILESYSTEM_HELP } from '../sandbox.js';
import { addSettingsOptions } from '../settings-options.js';
import { addAlias, storeOption, strictResumeOption } from '../vocabulary.js';

/** `stepwise label-code`: step labels for code from failing mutants of reference solutions. */
export function register(program: Command): void {
  const cmd = program
    .command('label-code')
    .description(
      'Step labels for code by mutation: mutate reference solutions (syntax tree), keep mutants that fail the tests, label steps before the first mutated one positive and that one negative (TRL stepwise rows)',
    )
    .requiredOption(
      '--dataset <name>',
      `code data set: ${LABEL_CODE_DATASETS.join(' | ')}`,
      choiceOption('--dataset', LABEL_CODE_DATASETS),
    )
    .option('--path <file>', 'data file (default: $STEPWISE_DATA/<dataset>, then the data pull cache)')
    .option('--split <name>', 'MBPP split by task id: test | train | validation | prompt (default: all 974)')
    .option('--limit <n>', 'label only the first n problems', intOption('--limit', 1));
  addSettingsOptions(cmd, LABEL_CODE_SETTINGS);
  addRunOptions(cmd, {
    out: 'output JSONL: one row per labeled solution ({prompt, completions, labels} + label-file fields)',
    items: 'problems',
    resumesFrom: '<out>.parts.jsonl',
  });
  cmd
    .addOption(strictResumeOption())
    .addOption(storeOption())
    .option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP);
  addAlias(cmd, '--segmentation', '--segment');
  addAlias(cmd, '--timeout-ms', '--timeout');
  addConfigOption(cmd, { command: 'label-code', renames: { segment: 'segmentation' } });
  cmd.action(runLabelCodeCommand);
}
