import { existsSync, readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { InputError } from '../../core/errors.js';
import { parseChunkTags, SEGMENT_MODES, type SegmentBy, segment } from '../../core/segment.js';

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
    .addHelpText(
      'after',
      '\nWith --by chunk-tags, spans index the text with the tags removed, which is printed as "text";\n' +
        'malformed tagging is reported as "problem".',
    )
    .action(async (file: string, opts: { by: SegmentBy; json?: boolean }) => {
      const text = await readInput(file);
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
      for (const c of chunks) {
        process.stdout.write(`--- chunk ${c.index} [${c.span.start}, ${c.span.end})\n${c.text}\n`);
      }
      process.stderr.write(`${chunks.length} chunks\n`);
    });
}
