import type { Command } from 'commander';
import {
  EVAL_CHUNKS_SETTINGS,
  PROCESSBENCH_RECORDED_AS,
  PROCESSBENCH_SETTINGS,
} from '../../evaluate/settings.js';
import { LABEL_SIGNALS } from '../../label/signals.js';
import { addBatchOptions } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { runEvalChunksCommand } from '../eval-chunks-run.js';
import { runEvalProcessbenchCommand } from '../eval-processbench-run.js';
import { judgeSpecHelp } from '../judge-docs.js';
import { baseUrlOption, jsonOption, quietOption } from '../option-groups.js';
import { addInputOption, segmentationOption, shardOption } from '../options.js';
import { addSettingsOptions } from '../settings-options.js';
import { addAlias, apiKeyOption, storeOption, strictResumeOption } from '../vocabulary.js';

/** What every judge-running `eval` command takes besides its settings: the judge and how it is reached. */
function addJudgeOptions(cmd: Command, required: string): Command {
  return cmd
    .option(
      '--judge <spec>',
      `judge spec: <kind>:<model spec>[?settings] (kinds and their settings below) ${required}`,
    )
    .addOption(
      baseUrlOption('OpenAI-compatible server(s) of the judge, comma-separated (default OPENAI_BASE_URL)'),
    )
    .addOption(apiKeyOption())
    .option('--no-cache', 'do not read or write the model-call cache')
    .addOption(storeOption())
    .addOption(quietOption('no progress bar'))
    .option(
      '--sim-guess',
      "let a simulated judge judge inputs that are not the simulated world's problems (seeded guesses)",
    )
    .addOption(
      jsonOption('also print the report as one JSON object on stdout (the readable one goes to stderr)'),
    );
}

/** `stepwise eval`: ProcessBench and chunk-level judge evaluation. */
export function register(program: Command): void {
  const evalCmd = program
    .command('eval')
    .description('Evaluate judges: ProcessBench first-error detection, chunk agreement with rollout labels');

  const processbench = addJudgeOptions(
    evalCmd
      .command('processbench')
      .description(
        'Score a judge on ProcessBench (official error_acc / correct_acc / F1), or score a predictions file',
      ),
    '(required, unless --predictions)',
  );
  addAlias(addSettingsOptions(processbench, PROCESSBENCH_SETTINGS), '--judge-votes', '--votes');
  addBatchOptions(processbench, "the judge's")
    .option(
      '--predictions <file>',
      'score this JSONL of {id, prediction} rows instead of running a judge (required, unless --judge)',
    )
    .option(
      '--path <dir>',
      'ProcessBench folder (gsm8k.json, …) or one ProcessBench-format file (default $STEPWISE_DATA/processbench)',
    )
    .option('--out <report.json>', 'report file; predictions go to <report>.predictions.jsonl (resumable)')
    .option('--fresh', 'start over instead of resuming the predictions file')
    .addOption(strictResumeOption())
    .addOption(shardOption('samples'))
    .option(
      '--critic-template <file>',
      'critic judges: prompt template with {problem} and {tagged_response} slots, sent verbatim (e.g. the official ProcessBench one; default: our own wording)',
    )
    .addHelpText(
      'after',
      `${judgeSpecHelp()}\nExamples:\n  stepwise eval processbench --judge prm:openai:Qwen/Qwen2.5-Math-PRM-7B --base-url http://127.0.0.1:8000/v1 --out pb.json\n` +
        '  stepwise eval processbench --judge critic:sim --out sim-critic.json     (simulated: not a real model)\n' +
        '  stepwise eval processbench --predictions preds.jsonl --json\n',
    )
    .action(runEvalProcessbenchCommand);
  addConfigOption(processbench, {
    command: 'eval processbench',
    renames: Object.fromEntries(Object.entries(PROCESSBENCH_RECORDED_AS).map(([field, as]) => [as, field])),
    fileDigests: ['criticTemplate'],
    // Whether the judge stopped at its first error follows from the judge and --threshold.
    adapt: ({ earlyExit: _earlyExit, ...rest }) => rest,
  });

  const chunks = addJudgeOptions(
    evalCmd
      .command('chunks')
      .description(
        "A judge's per-chunk accuracy, balanced accuracy and per-class recall against rollout labels",
      ),
    '(required)',
  );
  addAlias(addSettingsOptions(chunks, EVAL_CHUNKS_SETTINGS), '--judge-votes', '--votes');
  addInputOption(chunks, '`stepwise label` output (JSONL: chunks[{text, labels{signal}}])', ['labels'])
    .requiredOption('--signal <s>', `label signal to compare with: ${LABEL_SIGNALS.join(', ')}`)
    .option('--out <report.json>', 'also write the report here')
    .addOption(
      segmentationOption(
        "how the judge is shown earlier chunks (default: the label file's; tags: as the policy's <chunk>s)",
      ),
    )
    .addHelpText('after', judgeSpecHelp())
    .action(runEvalChunksCommand);
}
