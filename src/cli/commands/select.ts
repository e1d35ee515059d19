import type { Command } from 'commander';
import { SELECT_SETTINGS } from '../../train/select-settings.js';
import { addBatchOptions } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetLookupOptions } from '../datasets.js';
import { addRunOptions, addServerOptions } from '../option-groups.js';
import { addInputOption } from '../options.js';
import { runSelectCommand } from '../select-run.js';
import { addSettingsOptions } from '../settings-options.js';
import { strictResumeOption } from '../vocabulary.js';

/** `stepwise select`: each problem's best correct response by mean judge score (StepWiser). */
export function register(program: Command): void {
  const cmd = program
    .command('select')
    .description("Pick each problem's best correct response by mean judge score (StepWiser data selection)");
  addDatasetLookupOptions(cmd, 'where to find question texts when the sample rows lack them');
  addInputOption(cmd, '`stepwise sample` output (one line per problem with samples)', [
    'from',
  ]).requiredOption('--judge <spec>', 'judge spec (see docs/judges.md), e.g. generative:openai:MODEL or sim');
  addSettingsOptions(cmd, SELECT_SETTINGS);
  addRunOptions(cmd, {
    out: 'output JSONL: one line per problem with the judge pick and the outcome-only pick',
    items: 'problems',
  });
  cmd.addOption(strictResumeOption());
  addBatchOptions(addServerOptions(cmd), "the judge's").option(
    '--sim-guess',
    "let a simulated judge judge inputs that are not the simulated world's problems (seeded guesses)",
  );
  addConfigOption(cmd, { command: 'select' });
  cmd.action(runSelectCommand);
}
