import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { InputError, UsageError } from '../core/errors.js';
import type { FileKind } from '../core/file-kind.js';
import { createRng } from '../core/rng.js';
import type { Segmentation } from '../core/segment.js';
import { streamJsonl } from '../jobs/lines.js';
import { inShard, type Shard } from '../jobs/run-job.js';
import {
  addToPrefixLengthGroups,
  markBalancedByPrefixLength,
  type PrefixLengthGroups,
} from '../label/balance.js';
import { type ChatTemplate, continueAssistantTurn } from '../prompts/chat-template.js';
import { rebuiltDraft, type WrittenDraft } from '../prompts/refine.js';
import { labeledSteps, propagateBackward, toMathShepherd, toOpenRlhfSft, toTrlStepwise } from './formats.js';
import {
  emptyJudgeRlStats,
  type JudgeRlExample,
  type JudgeRlOptions,
  judgeRlCandidates,
  markBalancedClasses,
} from './judge-rl.js';
import { type LabeledSolution, LabeledSolutionSchema, validateRows } from './label-file.js';
import {
  buildLocalRefinePairs,
  globalRefinePairsOf,
  type SampledProblem,
  type SftPair,
  selfSegmentationPairOf,
  tagSpans,
} from './sft.js';
import { verlParquetWriter, verlSftParquetWriter } from './verl.js';

export type ExportTask = 'judge-rl' | 'prm' | 'sorm' | 'selfseg' | 'refine-global' | 'refine-local';
export type ExportFormat = 'verl' | 'openrlhf' | 'trl' | 'mathshepherd';

export const EXPORT_TASKS: readonly ExportTask[] = [
  'judge-rl',
  'prm',
  'sorm',
  'selfseg',
  'refine-global',
  'refine-local',
];
export const EXPORT_FORMATS: readonly ExportFormat[] = ['verl', 'openrlhf', 'trl', 'mathshepherd'];

/** Which formats each task can be written in. */
export const TASK_FORMATS: Record<ExportTask, readonly ExportFormat[]> = {
  'judge-rl': ['verl', 'openrlhf', 'trl'],
  prm: ['trl', 'mathshepherd', 'openrlhf'],
  sorm: ['trl', 'mathshepherd', 'openrlhf'],
  selfseg: ['trl', 'verl', 'openrlhf'],
  'refine-global': ['trl', 'openrlhf'],
  'refine-local': ['trl', 'openrlhf'],
};

/** The good prefix of a bad solution, as the policy wrote it (local refinement). */
export interface RefinePrefix {
  chunks: readonly string[];
  /** The prefix text the policy continues: its own text under tags, ending right after `</chunk>`. */
  text: string;
  segmentation: Segmentation;
}

/**
 * Finds a continuation of a good prefix that reaches the gold answer (for local refinement
 * pairs); null when none was found.
 */
export type CorrectContinuationFinder = (
  question: string,
  gold: string,
  prefix: RefinePrefix,
) => Promise<string | null>;

export interface ExportOptions {
  from: string;
  task: ExportTask;
  format: ExportFormat;
  out: string;
  /** Label signal for judge-rl / prm (default: `sorm` for sorm, else the file's first signal). */
  signal?: string;
  seed?: number;
  /** OpenRLHF keys (its `--input_key` / `--label_key`; for SFT tasks the label key holds the target). */
  promptKey?: string;
  labelKey?: string;
  maxPromptTokens?: number;
  /** judge-rl: keep the natural class balance instead of 50/50. */
  noBalance?: boolean;
  /** refine-local: how to get a correct continuation (e.g. sampling a policy). */
  findContinuation?: CorrectContinuationFinder;
  /** refine-local as TRL: the model's own chat template the prompt text is rendered with. */
  chatTemplate?: ChatTemplate;
  /** verl `data_source` (default `stepwise/<task>`). */
  dataSource?: string;
  split?: string;
  /** Only part K of N of the input (`--shard K/N`): the records whose `id` hashes to it. */
  shard?: Shard;
}

/** SORM balancing at one prefix length: rows kept and dropped, by last label. */
export interface PrefixLengthBalance {
  positive: number;
  negative: number;
  kept: number;
  dropped: number;
}

export interface ExportSummary {
  task: ExportTask;
  format: ExportFormat;
  out: string;
  rows: number;
  signal?: string;
  stats?: Record<string, number>;
  /** Present and true when the input came from a simulated run (then so does every JSONL row). */
  simulated?: true;
  /** With `--shard`: the part written, `K/N`. */
  shard?: string;
  /** sorm: per prefix length (chunks), the prefixes found and how many balancing kept and dropped. */
  byPrefixLength?: Record<string, PrefixLengthBalance>;
}

/** Where an export writes its rows: a JSONL or Parquet file, put in place only when complete. */
interface RowWriter<T> {
  rows: number;
  write(row: T): void;
  /** Finish the file and move it to its path. */
  close(): void;
  /** Remove the unfinished file (the path keeps what it had). */
  abort(): void;
}

/**
 * JSONL rows appended as they come (in 1 MB writes) to a temporary file beside `path`, renamed
 * into place by `close`: a failed export leaves no half-written training set.
 */
class JsonlRowWriter implements RowWriter<unknown> {
  private readonly tmp: string;
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingChars = 0;
  rows = 0;

  constructor(
    private readonly path: string,
    private readonly simulated: boolean,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.tmp = `${path}.tmp-${process.pid}`;
    this.fd = openSync(this.tmp, 'w');
  }

  write(row: unknown): void {
    // Rows built from a simulated run say so, each on its own line.
    const line = `${JSON.stringify(this.simulated ? { ...(row as object), simulated: true } : row)}\n`;
    this.pending.push(line);
    this.pendingChars += line.length;
    this.rows++;
    if (this.pendingChars >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.fd === undefined || this.pending.length === 0) return;
    writeSync(this.fd, this.pending.join(''));
    this.pending = [];
    this.pendingChars = 0;
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    renameSync(this.tmp, this.path);
  }

  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.tmp, { force: true });
  }
}

/** Write through `w`; on any error remove the unfinished file and rethrow. */
async function writeAll<W extends RowWriter<never>>(
  w: W,
  body: (w: W) => Promise<void> | void,
): Promise<number> {
  try {
    await body(w);
    w.close();
  } catch (e) {
    w.abort();
    throw e;
  }
  return w.rows;
}

/**
 * An export's input, read one record at a time — as often as the task needs (balancing reads it
 * once for the few facts it balances on, and again to write what it kept), so memory holds one
 * record and those facts, never the file. A file that changes while it is read is refused.
 */
class ExportInput {
  private readonly stamp: string;

  constructor(
    readonly file: string,
    readonly shard: Shard | undefined,
  ) {
    if (!existsSync(file)) throw new InputError({ file }, 'file not found');
    this.stamp = ExportInput.stampOf(file);
  }

  private static stampOf(file: string): string {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  }

  private checkUnchanged(): void {
    if (existsSync(this.file) && ExportInput.stampOf(this.file) === this.stamp) return;
    throw new InputError(
      { file: this.file },
      'the file changed while export was reading it (export reads its input more than once); run export again on a finished file',
    );
  }

  /** Whether a record is in this part (`--shard`): by its `id`, hashed as every job's shard. */
  private mine(value: unknown): boolean {
    const id = (value as { id?: unknown } | null)?.id;
    return typeof id !== 'string' || inShard(id, this.shard);
  }

  /**
   * Every record, checked by `parse` (which names file, line and field when one is bad), with
   * whether it is in this part and whether it says it came from a simulated run.
   */
  *all<T>(
    parse: (value: unknown, line: number) => T,
  ): Generator<{ line: number; record: T; mine: boolean; simulated: boolean }> {
    this.checkUnchanged();
    for (const { line, value } of streamJsonl(this.file)) {
      const record = parse(value, line);
      const simulated = (value as { simulated?: unknown } | null)?.simulated === true;
      yield { line, record, mine: this.mine(value), simulated };
    }
    this.checkUnchanged();
  }

  /** The records of this part, checked by `parse`. */
  *records<T>(parse: (value: unknown, line: number) => T): Generator<{ line: number; record: T }> {
    this.checkUnchanged();
    for (const { line, value } of streamJsonl(this.file)) {
      if (!this.mine(value)) continue;
      yield { line, record: parse(value, line) };
    }
    this.checkUnchanged();
  }
}

/** One record checked against `schema` (errors name file, line, field; a record of another kind says so). */
function checked<T>(
  file: string,
  schema: z.ZodType<T>,
  expect: { kinds: readonly FileKind[]; who: string },
): (value: unknown, line: number) => T {
  return (value, line) => validateRows(file, [{ line, value }], schema, expect)[0];
}

/** What a label file holds, from one read: its signals (in order of first appearance), kept rollouts, simulated. */
interface LabelFileScan {
  signals: string[];
  keptRollouts: boolean;
  simulated: boolean;
  /** Records in this part. */
  records: number;
}

function scanLabelFile(
  input: ExportInput,
  parse: (value: unknown, line: number) => LabeledSolution,
): LabelFileScan {
  const seen = new Set<string>();
  const scan: LabelFileScan = { signals: [], keptRollouts: false, simulated: false, records: 0 };
  for (const { record, mine, simulated } of input.all(parse)) {
    if (simulated) scan.simulated = true;
    for (const c of record.chunks) for (const k of Object.keys(c.labels)) seen.add(k);
    if (!scan.keptRollouts && hasKeptRollouts(record)) scan.keptRollouts = true;
    if (mine) scan.records++;
  }
  scan.signals = [...seen];
  return scan;
}

/**
 * SORM's label (GLoRe: positive iff some rollout from the prefix is correct) is the same
 * quantity as Math-Shepherd's hard label and Abs-Q, so any of them serves when `sorm` is absent.
 */
const SORM_EQUIVALENTS = ['sorm', 'ms-hard', 'abs-q'];

function pickSignal(present: readonly string[], task: ExportTask, signal?: string): string {
  if (present.length === 0) throw new UsageError('the label file has no labeled chunks');
  const chosen =
    signal ??
    (task === 'sorm' || task === 'refine-local'
      ? SORM_EQUIVALENTS.find((s) => present.includes(s))
      : present[0]);
  if (!chosen || !present.includes(chosen)) {
    const wanted = chosen ?? SORM_EQUIVALENTS.join(' / ');
    throw new UsageError(
      `no chunk has a label for signal "${wanted}"; the file has: ${present.join(', ')} (pass --signal)`,
    );
  }
  return chosen;
}

/**
 * selfseg input: `stepwise segment --segmentation llm` rows `{id, problem, text, chunks: [{text, span}],
 * method}` (only rows the LLM segmented are used: a paragraph fallback teaches nothing about
 * chunking), or `{id, problem, text, tagged}` rows.
 */
const TaggedRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string(),
  text: z.string(),
  tagged: z.string(),
});
const SegmentedRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string({ error: 'missing "problem": give the `stepwise segment` input rows a problem field' }),
  text: z.string(),
  method: z.enum(['llm', 'paragraph']),
  chunks: z.array(
    z.looseObject({
      text: z.string(),
      span: z.looseObject({ start: z.number().int(), end: z.number().int() }),
    }),
  ),
});
const SegmentationSchema = z.enum(['paragraph', 'tags']);

const SampleRowSchema = z.looseObject({
  id: z.string(),
  question: z.string().optional(),
  problem: z.string().optional(),
  segmentation: SegmentationSchema.optional(),
  samples: z.array(
    z.looseObject({
      text: z.string(),
      correct: z.boolean(),
      segmentation: SegmentationSchema.optional(),
      written: z.string().optional(),
    }),
  ),
});

/** An SFT pair in the chosen format: TRL conversational prompt-completion, or OpenRLHF keyed JSONL. */
function sftRow(p: SftPair, format: ExportFormat, promptKey: string, labelKey: string): unknown {
  if (format === 'trl')
    return { id: p.id, prompt: p.prompt, completion: [{ role: 'assistant', content: p.completion }] };
  return toOpenRlhfSft(p, { promptKey, labelKey });
}

/**
 * SORM training data (GLoRe): one row per labeled prefix — the solution cut after chunk k, with the
 * labels of its chunks, trained on the last one (TRL: `PRMConfig(train_on_last_step_only=True)`) —
 * then balanced per prefix length: at each length as many rows with a positive last label as with
 * a negative one (seeded down-sampling of the larger class; a length with one class only keeps
 * nothing). Row ids are `<solution id>@<k>`.
 */
function sormPrefixRow(r: LabeledSolution, k: number): LabeledSolution {
  return { ...r, id: `${r.id}@${k}`, chunks: r.chunks.slice(0, k) };
}

/** SORM: a prefix before a positive one is positive too. */
function propagatedForSorm(r: LabeledSolution, signal: string): LabeledSolution {
  const back = propagateBackward(labeledSteps(r, signal).labels);
  return {
    ...r,
    chunks: r.chunks.map((c, i) =>
      i < back.length ? { ...c, labels: { ...c.labels, [signal]: back[i] } } : c,
    ),
  };
}

/** Per prefix length, what was found and what balancing kept. */
function prefixLengthBalances(groups: PrefixLengthGroups): Record<string, PrefixLengthBalance> {
  const out: Record<string, PrefixLengthBalance> = {};
  for (const length of [...groups.keys()].sort((a, b) => a - b)) {
    const g = groups.get(length)!;
    const kept = 2 * Math.min(g.pos.length, g.neg.length);
    out[length] = {
      positive: g.pos.length,
      negative: g.neg.length,
      kept,
      dropped: g.pos.length + g.neg.length - kept,
    };
  }
  return out;
}

interface KeptRollouts {
  emptyPrefixRollouts?: unknown;
}

function isKeptList(v: unknown): v is Array<{ text: string; correct: boolean }> {
  return (
    Array.isArray(v) &&
    v.every(
      (x) =>
        typeof x === 'object' && x !== null && typeof x.text === 'string' && typeof x.correct === 'boolean',
    )
  );
}

/** Whether a label record carries its rollouts (`stepwise label --keep-rollouts`). */
function hasKeptRollouts(r: LabeledSolution): boolean {
  return r.chunks.some((c) => isKeptList((c as { rollouts?: unknown }).rollouts));
}

/**
 * The first correct kept rollout from the prefix before chunk `firstBad` (the bare problem when
 * it is 0), or null when none was kept or none is correct.
 */
function correctKeptRollout(r: LabeledSolution, firstBad: number): string | null {
  const list =
    firstBad === 0
      ? (r as LabeledSolution & KeptRollouts).emptyPrefixRollouts
      : (r.chunks[firstBad - 1] as { rollouts?: unknown }).rollouts;
  if (!isKeptList(list)) return null;
  return list.find((x) => x.correct)?.text ?? null;
}

/**
 * A labeled solution as the policy wrote it: the record's `written` text (label under tags keeps
 * the text its prefixes were cut from), checked against its chunks; else rebuilt from the chunks
 * in the segmentation's form (what label itself rebuilt for rollouts).
 */
function writtenDraftOf(
  file: string,
  line: number,
  r: LabeledSolution,
  chunks: string[],
  segmentation: Segmentation,
): WrittenDraft {
  if (!r.written) return rebuiltDraft(chunks, segmentation);
  const { text, ends } = r.written;
  const bad = (why: string) =>
    new InputError({ file, line, field: 'written' }, `solution ${r.id}: does not match its chunks (${why})`);
  if (ends.length !== chunks.length) throw bad(`${ends.length} prefix ends for ${chunks.length} chunks`);
  let from = 0;
  chunks.forEach((c, i) => {
    const at = text.indexOf(c, from);
    if (at < 0 || at + c.length > ends[i] || ends[i] > text.length)
      throw bad(`chunk ${i} is not in the text before its prefix end ${ends[i]}`);
    from = ends[i];
  });
  return { text, chunks, ends };
}

/**
 * TRL rows that train a continuation: a conversational row whose prompt ends with an assistant
 * message would be rendered by SFTTrainer with `add_generation_prompt=True` — a new assistant turn
 * after the prefix. So the row is TRL's standard prompt–completion form instead: `prompt` is the
 * text the model's own template renders up to and including the prefix (BOS left to the
 * tokenizer, which TRL calls with special tokens), `completion` the continuation, the only part
 * trained.
 */
function continuationRow(p: SftPair, template: ChatTemplate): unknown {
  const last = p.prompt[p.prompt.length - 1];
  const hasPrefix = last?.role === 'assistant';
  const conversation = hasPrefix ? p.prompt.slice(0, -1) : p.prompt;
  return {
    id: p.id,
    prompt: continueAssistantTurn(template, conversation, hasPrefix ? last.content : ''),
    completion: p.completion,
  };
}

/**
 * The format of `out`: verl writes Parquet, every other format JSONL, and the file's extension
 * must say which — a Parquet file named `.jsonl` (or JSONL named `.parquet`) is a trap for the
 * next tool that opens it. `format` unset: `.parquet` means verl; a `.jsonl`/`.json` name needs
 * `--format` (openrlhf, trl and mathshepherd all write JSONL). Throws a UsageError (exit 2).
 */
export function formatForOut(out: string, format: ExportFormat | undefined): ExportFormat {
  const ext = /\.([A-Za-z0-9]+)$/.exec(out)?.[1]?.toLowerCase();
  const parquet = ext === 'parquet';
  const jsonl = ext === 'jsonl' || ext === 'json';
  if (format === undefined) {
    if (parquet) return 'verl';
    throw new UsageError(
      `--out ${out}: ${jsonl ? 'a JSONL name fits several formats' : 'no .parquet or .jsonl extension'}: pass --format ` +
        `(${EXPORT_FORMATS.join(', ')}; verl writes .parquet, the others .jsonl)`,
    );
  }
  if (format === 'verl' && !parquet)
    throw new UsageError(
      `--format verl writes Parquet, but --out ${out} is not named .parquet: name it ${out.replace(/\.[A-Za-z0-9]+$/, '')}.parquet, or choose a JSONL format (${EXPORT_FORMATS.filter((f) => f !== 'verl').join(', ')})`,
    );
  if (format !== 'verl' && parquet)
    throw new UsageError(
      `--format ${format} writes JSONL, but --out ${out} is named .parquet: name it .jsonl, or pass --format verl for Parquet`,
    );
  return format;
}

/** Build one training set from a stepwise output file and write it (`stepwise export`). */
export async function exportTrainingData(o: ExportOptions): Promise<ExportSummary> {
  formatForOut(o.out, o.format);
  if (!TASK_FORMATS[o.task]?.includes(o.format)) {
    throw new UsageError(
      `task ${o.task} cannot be written as ${o.format}; formats for ${o.task}: ${TASK_FORMATS[o.task]?.join(', ') ?? 'none'}`,
    );
  }
  const input = new ExportInput(o.from, o.shard);
  const summary: ExportSummary = { task: o.task, format: o.format, out: o.out, rows: 0 };
  if (o.shard && o.shard.count > 1) summary.shard = `${o.shard.index}/${o.shard.count}`;
  if (o.task === 'judge-rl') await exportJudgeRl(o, input, summary);
  else if (o.task === 'prm' || o.task === 'sorm') await exportStepRows(o, input, summary);
  else if (o.task === 'selfseg') await exportSelfSegmentation(o, input, summary);
  else if (o.task === 'refine-global') await exportGlobalRefinement(o, input, summary);
  else await exportLocalRefinement(o, input, summary);
  return summary;
}

function keysOf(o: ExportOptions): { promptKey: string; labelKey: string } {
  const labelTask = o.task === 'judge-rl' || o.task === 'prm' || o.task === 'sorm';
  return {
    promptKey: o.promptKey ?? (labelTask ? 'input' : 'prompt'),
    labelKey: o.labelKey ?? (labelTask ? 'label' : 'response'),
  };
}

/** Reads the label file for `o.task`, notes whether it is simulated, and picks the signal. */
function labelInput(
  o: ExportOptions,
  input: ExportInput,
  summary: ExportSummary,
): { parse: (value: unknown, line: number) => LabeledSolution; scan: LabelFileScan; signal: string } {
  const parse = checked(o.from, LabeledSolutionSchema, { kinds: ['label'], who: `export --task ${o.task}` });
  const scan = scanLabelFile(input, parse);
  if (scan.simulated) summary.simulated = true;
  const signal = pickSignal(scan.signals, o.task, o.signal);
  summary.signal = signal;
  return { parse, scan, signal };
}

/**
 * judge-rl: with balancing, a first read keeps one position per candidate chunk by class (a few
 * bytes each), balancing picks positions, and a second read writes the picked ones in input order.
 */
async function exportJudgeRl(o: ExportOptions, input: ExportInput, summary: ExportSummary): Promise<void> {
  const { promptKey, labelKey } = keysOf(o);
  const { parse, scan, signal } = labelInput(o, input, summary);
  const options: JudgeRlOptions = { signal, maxPromptTokens: o.maxPromptTokens };
  const stats = emptyJudgeRlStats();
  const noSignal = () => new UsageError(`no chunk has a label for signal "${signal}"`);
  let keep: Uint8Array | undefined;
  if (!o.noBalance) {
    const pos: number[] = [];
    const neg: number[] = [];
    let at = 0;
    for (const { record } of input.records(parse))
      for (const ex of judgeRlCandidates(record, options, stats))
        (ex.label === 'Positive' ? pos : neg).push(at++);
    if (scan.records > 0 && stats.chunks === stats.unlabeled) throw noSignal();
    stats.positivesBefore = pos.length;
    stats.negativesBefore = neg.length;
    const marks = new Uint8Array(at);
    markBalancedClasses(pos, neg, o.seed ?? 0, (i) => {
      marks[i] = 1;
    });
    keep = marks;
  }
  // Counted again on the writing read only when no first read counted them.
  const passStats = keep ? emptyJudgeRlStats() : stats;
  const dataSource = o.dataSource ?? 'stepwise/judge-rl';
  let writer: RowWriter<never>;
  let emit: (e: JudgeRlExample) => void;
  if (o.format === 'verl') {
    const w = verlParquetWriter(o.out, { simulated: scan.simulated });
    writer = w;
    emit = (e) =>
      w.write({
        data_source: dataSource,
        prompt: e.prompt,
        ability: 'stepwise-judge',
        reward_model: { style: 'rule', ground_truth: e.label },
        extra_info: {
          split: o.split ?? 'train',
          index: w.rows,
          id: e.solutionId,
          chunk_index: e.chunkIndex,
          signal,
          question: e.problem,
        },
      });
  } else {
    const w = new JsonlRowWriter(o.out, scan.simulated);
    writer = w;
    emit = (e) =>
      w.write(
        o.format === 'openrlhf'
          ? { id: e.id, [promptKey]: e.prompt, [labelKey]: e.label }
          : { id: e.id, prompt: e.prompt, label: e.label },
      );
  }
  let positives = 0;
  summary.rows = await writeAll(writer, () => {
    let at = 0;
    for (const { record } of input.records(parse))
      for (const ex of judgeRlCandidates(record, options, passStats)) {
        if (keep && keep[at++] !== 1) continue;
        if (ex.label === 'Positive') positives++;
        emit(ex);
      }
    if (!keep && scan.records > 0 && stats.chunks === stats.unlabeled) throw noSignal();
  });
  stats.positives = positives;
  stats.negatives = summary.rows - positives;
  if (!keep) {
    stats.positivesBefore = stats.positives;
    stats.negativesBefore = stats.negatives;
  }
  summary.stats = stats;
}

/**
 * prm and sorm: one row per solution (prm) or per labeled prefix (sorm). SORM's balancing reads the
 * file once for each prefix's length and last label (positions only), then again to write.
 */
async function exportStepRows(o: ExportOptions, input: ExportInput, summary: ExportSummary): Promise<void> {
  const { promptKey, labelKey } = keysOf(o);
  const { parse, scan, signal } = labelInput(o, input, summary);
  const sorm = o.task === 'sorm';
  /** The part's usable solutions (a labeled first step), as the task sees them. */
  function* solutions(): Generator<LabeledSolution> {
    for (const { record } of input.records(parse)) {
      const r = sorm ? propagatedForSorm(record, signal) : record;
      if (labeledSteps(r, signal).steps.length > 0) yield r;
    }
  }
  let usable = 0;
  let keep: Uint8Array | undefined;
  let groups: PrefixLengthGroups | undefined;
  if (sorm) {
    groups = new Map();
    let at = 0;
    for (const r of solutions()) {
      usable++;
      for (const [i, positive] of labeledSteps(r, signal).labels.entries())
        addToPrefixLengthGroups(groups, at++, i + 1, positive);
    }
    const marks = new Uint8Array(at);
    markBalancedByPrefixLength(groups, createRng(o.seed ?? 0), (i) => {
      marks[i] = 1;
    });
    keep = marks;
    summary.byPrefixLength = prefixLengthBalances(groups);
  }
  const rowOf = (r: LabeledSolution): unknown => {
    if (o.format === 'trl') return { id: r.id, ...toTrlStepwise(r, signal) };
    if (o.format === 'mathshepherd') return toMathShepherd(r, signal, o.task);
    // OpenRLHF's ProcessRewardDataset asserts that the label is a list: one reward token per
    // placeholder `ки` in the input (openrlhf/datasets/process_reward_dataset.py).
    return {
      id: r.id,
      [promptKey]: toMathShepherd(r, signal, o.task).input,
      [labelKey]: labeledSteps(r, signal).labels.map((l) => (l ? '+' : '-')),
    };
  };
  summary.rows = await writeAll(new JsonlRowWriter(o.out, scan.simulated), (w) => {
    let at = 0;
    for (const r of solutions()) {
      if (!keep) {
        usable++;
        w.write(rowOf(r));
        continue;
      }
      const steps = labeledSteps(r, signal).steps.length;
      for (let k = 1; k <= steps; k++) if (keep[at++] === 1) w.write(rowOf(sormPrefixRow(r, k)));
    }
  });
  summary.stats = { solutions: scan.records, skippedUnlabeled: scan.records - usable };
  if (summary.byPrefixLength) {
    const lengths = Object.values(summary.byPrefixLength);
    summary.stats.prefixes = lengths.reduce((a, b) => a + b.kept + b.dropped, 0);
    summary.stats.dropped = lengths.reduce((a, b) => a + b.dropped, 0);
  }
}

/** A selfseg input row: a given tagging, or an LLM segmentation (its tagging built from the spans). */
type SelfSegInput =
  | { kind: 'tagged'; row: z.infer<typeof TaggedRowSchema> }
  | { kind: 'segmented'; row: z.infer<typeof SegmentedRowSchema> };

/**
 * selfseg: rows with a given tagging come first, then the LLM-segmented ones (each group in file
 * order), as the in-memory export wrote them: a read for each group.
 */
async function exportSelfSegmentation(
  o: ExportOptions,
  input: ExportInput,
  summary: ExportSummary,
): Promise<void> {
  const { promptKey, labelKey } = keysOf(o);
  const expect = { kinds: ['segment', 'texts'] as FileKind[], who: 'export --task selfseg' };
  const tagged = checked(o.from, TaggedRowSchema, expect);
  const segmented = checked(o.from, SegmentedRowSchema, expect);
  const parse = (value: unknown, line: number): SelfSegInput => {
    if (typeof (value as { tagged?: unknown } | null)?.tagged === 'string')
      return { kind: 'tagged', row: tagged(value, line) };
    const row = segmented(value, line);
    if (row.method === 'llm')
      row.chunks.forEach((c, i) => {
        if (row.text.slice(c.span.start, c.span.end) !== c.text)
          throw new InputError(
            { file: o.from, line, field: `chunks.${i}.span` },
            'the chunk text is not text.slice(span.start, span.end)',
          );
      });
    return { kind: 'segmented', row };
  };
  let simulated = false;
  let inputs = 0;
  let fallbacks = 0;
  const kinds = new Set<SelfSegInput['kind']>();
  for (const { record, mine, simulated: sim } of input.all(parse)) {
    if (sim) simulated = true;
    if (!mine) continue;
    inputs++;
    kinds.add(record.kind);
    if (record.kind === 'segmented' && record.row.method !== 'llm') fallbacks++;
  }
  if (simulated) summary.simulated = true;
  let rejected = 0;
  let writer: RowWriter<never>;
  let emit: (p: SftPair) => void;
  if (o.format === 'verl') {
    const w = verlSftParquetWriter(o.out, { simulated });
    writer = w;
    emit = (p) =>
      w.write({
        id: p.id,
        messages: [...p.prompt, { role: 'assistant', content: p.completion }],
        question: p.prompt[p.prompt.length - 1].content,
        answer: p.completion,
      });
  } else {
    const w = new JsonlRowWriter(o.out, simulated);
    writer = w;
    emit = (p) => w.write(sftRow(p, o.format, promptKey, labelKey));
  }
  summary.rows = await writeAll(writer, () => {
    for (const kind of ['tagged', 'segmented'] as const) {
      if (!kinds.has(kind)) continue;
      for (const { record } of input.records(parse)) {
        if (record.kind !== kind) continue;
        let row: { id: string; problem: string; text: string; tagged: string };
        if (record.kind === 'tagged') row = record.row;
        else if (record.row.method !== 'llm') continue;
        else {
          const r = record.row;
          row = {
            id: r.id,
            problem: r.problem,
            text: r.text,
            tagged: tagSpans(
              r.text,
              r.chunks.map((c) => c.span),
            ),
          };
        }
        const made = selfSegmentationPairOf(row);
        if ('pair' in made) emit(made.pair);
        else rejected++;
      }
    }
  });
  summary.stats = { inputs, paragraphFallbacks: fallbacks, rejected };
}

/** refine-global: each sample row's pairs, one row at a time (one seeded stream over the file). */
async function exportGlobalRefinement(
  o: ExportOptions,
  input: ExportInput,
  summary: ExportSummary,
): Promise<void> {
  const { promptKey, labelKey } = keysOf(o);
  const sampleRow = checked(o.from, SampleRowSchema, { kinds: ['sample'], who: `export --task ${o.task}` });
  const parse = (value: unknown, line: number): SampledProblem => {
    const r = sampleRow(value, line);
    const question = r.question ?? r.problem;
    if (question === undefined)
      throw new InputError(
        { file: o.from, line, field: 'question' },
        `${r.id} has neither "question" nor "problem"`,
      );
    return {
      id: r.id,
      question,
      samples: r.samples,
      ...(r.segmentation ? { segmentation: r.segmentation } : {}),
    };
  };
  let simulated = false;
  let problems = 0;
  for (const { mine, simulated: sim } of input.all(parse)) {
    if (sim) simulated = true;
    if (mine) problems++;
  }
  if (simulated) summary.simulated = true;
  const rng = createRng(o.seed ?? 0);
  summary.rows = await writeAll(new JsonlRowWriter(o.out, simulated), (w) => {
    for (const { record } of input.records(parse))
      for (const p of globalRefinePairsOf(record, rng)) w.write(sftRow(p, o.format, promptKey, labelKey));
  });
  summary.stats = { problems };
}

/** refine-local: one row per bad solution with a correct continuation, found as each record is read. */
async function exportLocalRefinement(
  o: ExportOptions,
  input: ExportInput,
  summary: ExportSummary,
): Promise<void> {
  const { promptKey, labelKey } = keysOf(o);
  const { parse, scan, signal } = labelInput(o, input, summary);
  if (!scan.keptRollouts && !o.findContinuation) {
    throw new UsageError(
      'refine-local needs a correct continuation of each good prefix: label with --keep-rollouts ' +
        '(the SORM rollouts are reused, as GLoRe does) or pass --policy <spec> to sample one',
    );
  }
  // TRL and OpenRLHF alike would open a new assistant turn after the good prefix if given messages.
  const template = o.chatTemplate;
  if (!template)
    throw new UsageError(
      `refine-local as ${o.format === 'trl' ? 'TRL' : 'OpenRLHF'} rows trains the continuation of the model's assistant turn, so the prompt is rendered ` +
        "with the model's own chat template: pass --chat-template FILE (its tokenizer_config.json or .jinja)",
    );
  let noContinuation = 0;
  let fromRollouts = 0;
  let sampled = 0;
  summary.rows = await writeAll(new JsonlRowWriter(o.out, scan.simulated), async (w) => {
    for (const { line, record: r } of input.records(parse)) {
      const { labels } = labeledSteps(r, signal);
      const firstBad = labels.indexOf(false);
      if (firstBad < 0) continue;
      if (r.answer === undefined)
        throw new InputError({ file: o.from, line, field: 'answer' }, `solution ${r.id} has no gold answer`);
      const chunks = r.chunks.map((c) => c.text);
      const segmentation = r.segmentation ?? 'paragraph';
      const written = writtenDraftOf(o.from, line, r, chunks, segmentation);
      const prefix = {
        chunks: chunks.slice(0, firstBad),
        text: firstBad > 0 ? written.text.slice(0, written.ends[firstBad - 1]) : '',
        segmentation,
      };
      // GLoRe reuses the SORM data: a correct rollout drawn from the prefix before the first bad step.
      let continuation = correctKeptRollout(r, firstBad);
      if (continuation !== null) fromRollouts++;
      else if (o.findContinuation) {
        continuation = await o.findContinuation(r.problem, r.answer, prefix);
        if (continuation !== null) sampled++;
      }
      if (continuation === null) {
        noContinuation++;
        continue;
      }
      const [pair] = buildLocalRefinePairs([
        {
          id: r.id,
          question: r.problem,
          chunks,
          firstBad,
          correctContinuation: continuation,
          segmentation,
          written,
        },
      ]);
      w.write(
        o.format === 'trl'
          ? continuationRow(pair, template)
          : toOpenRlhfSft(pair, { promptKey, labelKey }, template),
      );
    }
  });
  summary.stats = {
    solutions: scan.records,
    fromKeptRollouts: fromRollouts,
    sampled,
    noCorrectContinuation: noContinuation,
  };
}
