import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError, UsageError } from '../core/errors.js';
import { parseChunkTags, type SegmentBy, segment, validateSelfSegmentation } from '../core/segment.js';
import type { Chunk } from '../core/types.js';
import { resumePhrase } from '../jobs/made-from.js';
import { flagName } from '../jobs/settings.js';
import {
  readSegmentInput,
  resolveSegmentConfig,
  runSegmentJob,
  type SegmentSummary,
} from '../segment/job.js';
import { SEGMENT_SETTINGS, type SegmentConfig } from '../segment/settings.js';
import { runJobCommand } from './job-harness.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { warn } from './warn.js';

/** The flags of `stepwise segment`: the mode, then the fields of {@link SEGMENT_SETTINGS} and the files and servers of llm mode. */
export type SegmentFlags = Partial<SegmentConfig> & {
  segmentation: SegmentBy | 'llm';
  json?: boolean;
  original?: string;
  fallback: Exclude<SegmentBy, 'tags'>;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  input?: string;
  out?: string;
  timeoutMs?: number;
  maxRetries?: number;
  cache: boolean;
  fresh?: boolean;
  strictResume?: boolean;
  quiet?: boolean;
  store?: string;
};

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

function printChunks(chunks: readonly Chunk[]): void {
  for (const c of chunks)
    process.stdout.write(`--- chunk ${c.index} [${c.span.start}, ${c.span.end})\n${c.text}\n`);
  process.stderr.write(`${chunks.length} chunks\n`);
}

/**
 * What `stepwise segment` does once its flags are parsed: split one text by a rule (or check a
 * model's tagging of it against the original), or — with `--segmentation llm` — segment a file of
 * solutions with a model, a resumable job in the job harness.
 */
export async function runSegmentCommand(file: string, flags: SegmentFlags): Promise<void> {
  if (flags.segmentation === 'llm') return segmentFileWithLlm(flags);
  if (flags.model !== undefined || flags.input !== undefined || flags.out !== undefined)
    throw new UsageError('--model, --input and --out go with --segmentation llm');
  const text = await readInput(file);
  if (flags.original !== undefined) {
    const original = await readInput(flags.original);
    const result = validateSelfSegmentation(original, text, flags.fallback);
    if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else printChunks(result.chunks);
    process.stderr.write(
      result.accepted
        ? 'tagging accepted\n'
        : `tagging rejected (${result.reason}); used --fallback ${flags.fallback}\n`,
    );
    return;
  }
  const chunks = segment(text, flags.segmentation);
  if (!flags.json) return printChunks(chunks);
  const out: Record<string, unknown> = { chunks };
  if (flags.segmentation === 'tags') {
    const parsed = parseChunkTags(text);
    out.text = parsed.text;
    if (parsed.problem) out.problem = parsed.problem;
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** `segment --segmentation llm`: a resumable job over a JSONL file of solutions. */
async function segmentFileWithLlm(flags: SegmentFlags): Promise<void> {
  for (const flag of ['model', 'input', 'out'] as const)
    if (flags[flag] === undefined) throw new UsageError(`--segmentation llm needs --${flag}`);
  const input = flags.input as string;
  const modelSpec = flags.model as string;
  const out = resolve(flags.out as string);
  if (resolve(input) === out) throw new UsageError('--out must not be the --input file');
  const config = resolveSegmentConfig(settingsFromFlags(SEGMENT_SETTINGS, { ...flags }), flagName);
  const rows = readSegmentInput(input);
  const model = await providers.languageModel(modelSpec, {
    settings: {
      baseUrl: flags.baseUrl,
      concurrency: config.concurrency,
      timeoutMs: flags.timeoutMs,
      maxRetries: flags.maxRetries,
      apiKey: flags.apiKey,
    },
    storePath: flags.store,
    noCache: !flags.cache,
    onWarning: warn,
  });
  await runJobCommand<SegmentSummary>({
    command: 'segment',
    out,
    store: flags.store,
    record: { input: resolve(input), model: modelSpec, ...config },
    quiet: flags.quiet,
    json: flags.json,
    stopsOnInterrupt: true,
    total: rows.length,
    cleanup: () => model.close?.(),
    run: ({ onProgress, signal }) =>
      runSegmentJob({
        ...{ rows, model, modelSpec, out, ...config },
        ...{ fresh: flags.fresh, strictResume: flags.strictResume, noCache: !flags.cache, signal },
        onWarning: warn,
        onProgress: (p) => onProgress({ ...p, unit: 'solutions' }),
      }),
    counts: (s) => ({ solutions: s.solutions, requests: s.requests, rejected: s.rejectedReplies }),
    summary: (s, runId) => ({
      readable: {
        command: 'segment --segmentation llm',
        headline: `${s.solutions} solutions (${resumePhrase(s)}) by ${modelSpec}`,
        lines: [
          [
            'method',
            `${s.methods.llm} from an accepted reply, ${s.methods.paragraph} by the paragraph fallback`,
          ],
          ['replies', `${s.requests} asked for, ${s.rejectedReplies} rejected`],
          [
            'chunks',
            `${s.chunksPerSolution.segmented.toFixed(1)} per solution (paragraphs: ${s.chunksPerSolution.paragraphs.toFixed(1)})`,
          ],
        ],
        wrote: [s.out],
        run: runId,
      },
      json: { model: modelSpec, ...s },
    }),
  });
}
