import { setMaxListeners } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { InputError, StepwiseError, UsageError } from '../../core/errors.js';
import {
  parseChunkTags,
  SEGMENT_MODES,
  type SegmentBy,
  segment,
  validateSelfSegmentation,
  type WhitespaceRule,
} from '../../core/segment.js';
import type { Chunk } from '../../core/types.js';
import { resumePhrase } from '../../jobs/made-from.js';
import { createModel } from '../../models/registry.js';
import { readSegmentInput, runSegmentJob } from '../../segment/job.js';
import { DEFAULT_SEGMENTER_ATTEMPTS } from '../../segment/llm.js';
import { addConfigOption } from '../config-file.js';
import { baseUrlOption, jsonOption, quietOption, seedOption } from '../option-groups.js';
import { floatOption, intOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import { reportJob } from '../summary.js';
import { addAlias, apiKeyOption, msOption, storeOption, strictResumeOption } from '../vocabulary.js';

/** Read a whole file, or stdin for `-`. */
async function readInput(file: string): Promise<string> {
  if (file !== '-') {
    if (!existsSync(file)) throw new InputError({ file }, 'file not found');
    return readFileSync(file, 'utf8');
  }
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

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
    .option('--model <spec>', 'with --segmentation llm: the segmenter model (openai:<model>, gguf:<path>, …)')
    .addOption(baseUrlOption('with --segmentation llm: OpenAI-compatible server URL ending in /v1'))
    .addOption(apiKeyOption())
    .addOption(storeOption())
    .option('--input <file>', 'with --segmentation llm: JSONL rows {id, text, problem?}')
    .option(
      '--out <file>',
      'with --segmentation llm: output JSONL rows {id, chunks[{text, span}], method, attempts, …} (resumed)',
    )
    .option(
      '--attempts <k>',
      `with --segmentation llm: replies asked for per solution before falling back to paragraphs (default ${DEFAULT_SEGMENTER_ATTEMPTS})`,
      intOption('--attempts', 1),
      DEFAULT_SEGMENTER_ATTEMPTS,
    )
    .addOption(
      new Option(
        '--whitespace <rule>',
        'with --segmentation llm: between-chunks (whitespace between chunks may differ) or exact (tag-free reply must equal the text)',
      )
        .choices(['between-chunks', 'exact'])
        .default('between-chunks'),
    )
    .option(
      '--max-tokens <t>',
      'with --segmentation llm: token budget of one reply (default: from the text length)',
      intOption('--max-tokens', 1),
    )
    .option(
      '--retry-temperature <t>',
      'with --segmentation llm: temperature of retries (the first reply is greedy)',
      floatOption('--retry-temperature', 0, 10),
      0.7,
    )
    .addOption(seedOption('with --segmentation llm: base seed of the requests', { min: 0, default: 0 }))
    .option(
      '--concurrency <c>',
      'with --segmentation llm: solutions in flight',
      intOption('--concurrency', 1),
      8,
    )
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
        '--json to stdout as JSON.',
    )
    .action(
      async (
        file: string,
        opts: {
          segmentation: SegmentBy | 'llm';
          json?: boolean;
          original?: string;
          fallback: Exclude<SegmentBy, 'tags'>;
        } & LlmFlags,
      ) => {
        if (opts.segmentation === 'llm') return segmentFileWithLlm(opts);
        if (opts.model !== undefined || opts.input !== undefined || opts.out !== undefined)
          throw new UsageError('--model, --input and --out go with --segmentation llm');
        const text = await readInput(file);
        if (opts.original !== undefined) {
          const original = await readInput(opts.original);
          const result = validateSelfSegmentation(original, text, opts.fallback);
          if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
          else printChunks(result.chunks);
          process.stderr.write(
            result.accepted
              ? 'tagging accepted\n'
              : `tagging rejected (${result.reason}); used --fallback ${opts.fallback}\n`,
          );
          return;
        }
        const chunks = segment(text, opts.segmentation);
        if (opts.json) {
          const out: Record<string, unknown> = { chunks };
          if (opts.segmentation === 'tags') {
            const parsed = parseChunkTags(text);
            out.text = parsed.text;
            if (parsed.problem) out.problem = parsed.problem;
          }
          process.stdout.write(`${JSON.stringify(out)}\n`);
          return;
        }
        printChunks(chunks);
      },
    );
  addAlias(cmd, '--segmentation', '--by');
  acceptOldTagsSpelling(cmd);
  addConfigOption(cmd, {
    command: 'segment',
    renames: { by: 'segmentation' },
    // The segmenter's first attempt is greedy (temperature 0); no flag sets it.
    adapt: ({ temperature, ...rest }) => (temperature === 0 ? rest : { ...rest, temperature }),
  });
}

function printChunks(chunks: readonly Chunk[]): void {
  for (const c of chunks)
    process.stdout.write(`--- chunk ${c.index} [${c.span.start}, ${c.span.end})\n${c.text}\n`);
  process.stderr.write(`${chunks.length} chunks\n`);
}

interface LlmFlags {
  model?: string;
  baseUrl?: string;
  input?: string;
  out?: string;
  attempts: number;
  whitespace: WhitespaceRule;
  maxTokens?: number;
  retryTemperature: number;
  seed: number;
  concurrency: number;
  timeoutMs?: number;
  maxRetries?: number;
  cache: boolean;
  fresh?: boolean;
  strictResume?: boolean;
  quiet?: boolean;
  json?: boolean;
  apiKey?: string;
  store?: string;
}

/**
 * `tags` is the name of the `<chunk>` mode on every command; segment once called it `chunk-tags`,
 * still accepted (hidden from the choices) so old scripts keep working.
 */
function acceptOldTagsSpelling(cmd: Command): void {
  for (const option of cmd.options.filter((o) => o.long === '--segmentation' || o.long === '--by')) {
    const parse = option.parseArg;
    if (!parse) throw new Error(`segment: ${option.long} takes no value`);
    option.argParser((value: string, previous: unknown) =>
      parse(value === 'chunk-tags' ? 'tags' : value, previous),
    );
  }
}

/** `segment --segmentation llm`: a resumable job over a JSONL file of solutions. */
async function segmentFileWithLlm(opts: LlmFlags): Promise<void> {
  for (const flag of ['model', 'input', 'out'] as const)
    if (opts[flag] === undefined) throw new UsageError(`--segmentation llm needs --${flag}`);
  const input = opts.input as string;
  const out = resolve(opts.out as string);
  if (resolve(input) === out) throw new UsageError('--out must not be the --input file');
  const rows = readSegmentInput(input);
  const model = await createModel(opts.model as string, {
    baseUrl: opts.baseUrl,
    concurrency: opts.concurrency,
    timeoutMs: opts.timeoutMs,
    maxRetries: opts.maxRetries,
    apiKey: opts.apiKey,
    storePath: opts.store,
    noCache: !opts.cache,
    onWarning: (m) => process.stderr.write(`stepwise: warning: ${m}\n`),
  });
  const bar = createProgressBar('segment', { quiet: opts.quiet });
  const interrupt = new AbortController();
  setMaxListeners(1_000_000, interrupt.signal);
  const onSigint = (): void => interrupt.abort();
  process.once('SIGINT', onSigint);
  try {
    const summary = await runSegmentJob({
      rows,
      model,
      modelSpec: opts.model as string,
      out,
      attempts: opts.attempts,
      whitespace: opts.whitespace,
      maxTokens: opts.maxTokens,
      retryTemperature: opts.retryTemperature,
      seed: opts.seed,
      concurrency: opts.concurrency,
      fresh: opts.fresh,
      strictResume: opts.strictResume,
      onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
      noCache: !opts.cache,
      signal: interrupt.signal,
      onProgress: (p) => bar.update(p.done, p.total, p.resumed ? `${p.resumed} resumed` : ''),
    });
    bar.stop();
    reportJob(
      {
        command: 'segment --segmentation llm',
        headline: `${summary.solutions} solutions (${resumePhrase(summary)}) by ${opts.model}`,
        lines: [
          [
            'method',
            `${summary.methods.llm} from an accepted reply, ${summary.methods.paragraph} by the paragraph fallback`,
          ],
          ['replies', `${summary.requests} asked for, ${summary.rejectedReplies} rejected`],
          [
            'chunks',
            `${summary.chunksPerSolution.segmented.toFixed(1)} per solution (paragraphs: ${summary.chunksPerSolution.paragraphs.toFixed(1)})`,
          ],
        ],
        wrote: [summary.out],
      },
      { model: opts.model, ...summary },
      opts,
    );
  } catch (err) {
    bar.stop();
    if (interrupt.signal.aborted)
      throw new StepwiseError(`interrupted: rerun the same command to finish the rest of ${out}`, {
        exitCode: 130,
      });
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await model.close?.();
  }
}
