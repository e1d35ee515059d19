import type { Command } from 'commander';
import { EXPORT_SETTINGS } from '../../train/export-settings.js';
import { addConfigOption } from '../config-file.js';
import { runExportCommand } from '../export-run.js';
import { baseUrlOption, jsonOption, quietOption } from '../option-groups.js';
import { addInputOption, shardOption } from '../options.js';
import { addSettingsOptions } from '../settings-options.js';
import { apiKeyOption, storeOption } from '../vocabulary.js';

/** `stepwise export`: training data for verl, OpenRLHF or TRL, as a task × format table (src/train/export.ts). */
export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description('Write training data for verl, OpenRLHF or TRL from label or sample files');
  addInputOption(
    cmd,
    'input: `stepwise label` output (judge-rl, prm, sorm, refine-local), `stepwise sample` output (refine-global), or `stepwise segment --segmentation llm` output / {id, problem, text, tagged} rows (selfseg)',
    ['from'],
  );
  addSettingsOptions(cmd, EXPORT_SETTINGS);
  cmd
    .requiredOption('--out <path>', 'output file')
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
    .addOption(
      shardOption('input records (solutions, sample rows, segmented texts); balancing is within the part'),
    )
    .addOption(quietOption())
    .addOption(jsonOption());
  addConfigOption(cmd, { command: 'export', fileDigests: ['chatTemplate'] });
  cmd.action(runExportCommand);
}
