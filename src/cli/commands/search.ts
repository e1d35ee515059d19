import { type Command, Option } from 'commander';
import { STRATEGY_NAMES } from '../../search/registry.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetOptions } from '../datasets.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { intOption, shardOption } from '../options.js';
import { runSearchCommand } from '../search-run.js';
import { addModelOptions, addStrategyOptions, SEARCH_SETTING_FLAGS } from '../search-setup.js';
import { addSimGuessOption } from '../sim-guard.js';
import { strictResumeOption } from '../vocabulary.js';

/** `stepwise search`: one strategy over a data set, accuracy and cost per problem, resumable. */
export function register(program: Command): void {
  const cmd = program
    .command('search')
    .description('Run one search strategy over a data set: accuracy and cost per problem (resumable JSONL)');
  addDatasetOptions(cmd);
  addModelOptions(cmd);
  addSimGuessOption(cmd);
  cmd.addOption(
    new Option('--strategy <name>', 'search strategy')
      .choices(STRATEGY_NAMES as string[])
      .makeOptionMandatory(),
  );
  addStrategyOptions(cmd);
  cmd
    .requiredOption(
      '--out <file>',
      'output JSONL: one line per problem {id, answer, correct, finalText, chunks, cost, stats, trace}',
    )
    .option('--concurrency <c>', 'problems searched at once', intOption('--concurrency', 1), 4)
    .option('--fresh', 'start the output over instead of resuming it')
    .addOption(strictResumeOption())
    .addOption(shardOption('problems'))
    .option(
      '--batch-out <file>',
      'not for search: a search decides each step from the last answer, so it cannot be written as batch files',
    )
    .option('--batch-in <file>', 'not for search (see --batch-out)')
    .option('--no-trace', 'leave the attempt tree out of the output lines')
    .option('--gold-check', 'check final answers against the gold answers (the default)')
    .option(
      '--no-gold-check',
      'do not check final answers against the gold answers (accuracy is then not reported)',
    )
    .addOption(quietOption())
    .addOption(jsonOption());
  addConfigOption(cmd, { command: 'search', renames: SEARCH_SETTING_FLAGS, fileDigests: ['chatTemplate'] });
  cmd.action(runSearchCommand);
}
