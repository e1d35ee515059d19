import { type Command, Option } from 'commander';
import { SEGMENT_MODES } from '../../core/segment.js';
import { SEGMENT_SETTINGS } from '../../segment/settings.js';
import { addConfigOption } from '../config-file.js';
import { baseUrlOption, jsonOption, quietOption } from '../option-groups.js';
import { intOption } from '../options.js';
import { runSegmentCommand } from '../segment-run.js';
import { addSettingsOptions } from '../settings-options.js';
import { addAlias, apiKeyOption, msOption, storeOption, strictResumeOption } from '../vocabulary.js';

/** `stepwise segment`: split a solution text into chunks with exact spans. */
export function register(program: Command): void {
  const cmd = program
    .command('segment')
    .description(
      'Split a solution text into chunks (paragraphs, Step k markers, <chunk> tags or lines), or segment a file of solutions with an LLM (--segmentation llm)',
    )
    .argument('[file]', 'text file to split, or - for stdin', '-')
    .addOption(
      new Option(
        '--segmentation <mode>',
        'how to split: blank-line paragraphs, "Step k:" markers, <chunk> tags, lines, or an LLM segmenter (llm)',
      )
        .choices([...SEGMENT_MODES, 'llm'])
        .default('paragraph'),
    )
    .option(
      '--model <spec>',
      'with --segmentation llm: the segmenter model (openai:<model>, gguf:<path>, …) (required with --segmentation llm)',
    )
    .addOption(baseUrlOption('with --segmentation llm: OpenAI-compatible server URL ending in /v1'))
    .addOption(apiKeyOption())
    .addOption(storeOption())
    .option(
      '--input <file>',
      'with --segmentation llm: JSONL rows {id, text, problem?} (required with --segmentation llm)',
    )
    .option(
      '--out <file>',
      'with --segmentation llm: output JSONL rows {id, chunks[{text, span}], method, attempts, …} (resumed) (required with --segmentation llm)',
    );
  addSettingsOptions(cmd, SEGMENT_SETTINGS)
    .option('--timeout-ms <ms>', 'with --segmentation llm: timeout of one HTTP request', msOption)
    .option(
      '--max-retries <r>',
      'with --segmentation llm: retries of a failed request',
      intOption('--max-retries', 0),
    )
    .option('--no-cache', 'with --segmentation llm: bypass the model-call cache')
    .option('--fresh', 'with --segmentation llm: start the output over instead of resuming it')
    .addOption(strictResumeOption())
    .addOption(quietOption('with --segmentation llm: no progress bar'))
    .addOption(
      jsonOption(
        'print {"chunks": [{index, text, span: {start, end}}]} (spans index the input text); with --segmentation llm, the summary as JSON',
      ),
    )
    .option(
      '--original <file>',
      'validated self-segmentation: FILE is the <chunk>-tagged text, accepted only if removing the tags gives back this original exactly',
    )
    .addOption(
      new Option('--fallback <mode>', 'with --original: splitter used when the tagging is rejected')
        .choices(['paragraph', 'steps', 'lines'])
        .default('paragraph'),
    )
    .addHelpText(
      'after',
      '\nWith --segmentation tags, spans index the text with the tags removed, which is printed as "text";\n' +
        'malformed tagging is reported as "problem".\n' +
        'With --original, the output is {"chunks", "accepted", "reason"?}: chunks of the original text,\n' +
        "from the model's tags when accepted, else from --fallback.\n" +
        '\nWith --segmentation llm, each row of --input is sent to --model, which copies it with <chunk> tags. A reply is\n' +
        'accepted only when its chunks give back the text exactly; only the whitespace BETWEEN two chunks may\n' +
        'differ (it belongs to no chunk; --whitespace exact forbids even that). A rejected reply is asked for\n' +
        'again, up to --attempts, then the text is split on blank lines ("method": "paragraph"). Spans index\n' +
        'the input text. A summary (chunks per solution before/after, rejected replies) goes to stderr, and with\n' +
        '--json to stdout as JSON. Ctrl-C stops it: finished rows are kept, and a rerun resumes.',
    )
    .action(runSegmentCommand);
  addAlias(cmd, '--segmentation', '--by');
  addConfigOption(cmd, {
    command: 'segment',
    renames: { by: 'segmentation' },
    // The segmenter's first attempt is greedy (temperature 0); no flag sets it.
    adapt: ({ temperature, ...rest }) => (temperature === 0 ? rest : { ...rest, temperature }),
  });
}
