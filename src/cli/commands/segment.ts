import { existsSync, readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { InputError } from '../../core/errors.js';
import {
  parseChunkTags,
  SEGMENT_MODES,
  type SegmentBy,
  segment,
  validateSelfSegmentation,
} from '../../core/segment.js';
import type { Chunk } from '../../core/types.js';

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
  program
    .command('segment')
    .description('Split a solution text into chunks (paragraphs, Step k markers, <chunk> tags or lines)')
    .argument('[file]', 'text file to split, or - for stdin', '-')
    .addOption(
      new Option('--by <mode>', 'how to split: blank-line paragraphs, "Step k:" markers, <chunk> tags, lines')
        .choices([...SEGMENT_MODES])
        .default('paragraph'),
    )
    .option('--json', 'print {"chunks": [{index, text, span: {start, end}}]} (spans index the input text)')
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
      '\nWith --by chunk-tags, spans index the text with the tags removed, which is printed as "text";\n' +
        'malformed tagging is reported as "problem".\n' +
        'With --original, the output is {"chunks", "accepted", "reason"?}: chunks of the original text,\n' +
        "from the model's tags when accepted, else from --fallback.",
    )
    .action(
      async (
        file: string,
        opts: {
          by: SegmentBy;
          json?: boolean;
          original?: string;
          fallback: Exclude<SegmentBy, 'chunk-tags'>;
        },
      ) => {
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
        const chunks = segment(text, opts.by);
        if (opts.json) {
          const out: Record<string, unknown> = { chunks };
          if (opts.by === 'chunk-tags') {
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
}

function printChunks(chunks: readonly Chunk[]): void {
  for (const c of chunks)
    process.stdout.write(`--- chunk ${c.index} [${c.span.start}, ${c.span.end})\n${c.text}\n`);
  process.stderr.write(`${chunks.length} chunks\n`);
}
