import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import type { JobProgress, Shard } from '../jobs/run-job.js';
import type { ChatTemplate } from '../prompts/chat-template.js';
import {
  EXPORT_FORMAT_SPECS,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportFormatSpec,
  type RowMapper,
} from './export-formats.js';
import { ExportInput, JsonlRowWriter, type RowWriter, writeAll } from './export-io.js';
import type { ExportRecordKind, ExportRecords, RowContext } from './export-records.js';
import { EXPORT_TASKS, type ExportJob, type ExportTask, TASK_EXPORTERS } from './export-tasks.js';

/**
 * `stepwise export`: a task × format table. A task exporter (./export-tasks.ts) turns stepwise's
 * rows into neutral records of one kind (./export-records.ts); a format (./export-formats.ts) maps
 * each record to its engine's row. This file looks both up and joins them: the file written, put
 * in place only when complete, and the summary.
 */

export { EXPORT_FORMATS, EXPORT_TASKS, type ExportFormat, type ExportTask };

/** Which formats each task can be written in: those with a mapper for the task's record kind. */
export const TASK_FORMATS = Object.fromEntries(
  EXPORT_TASKS.map((task) => [
    task,
    EXPORT_FORMATS.filter((f) => formatRows(f, TASK_EXPORTERS[task].record) !== undefined),
  ]),
) as unknown as Record<ExportTask, readonly ExportFormat[]>;

/** The format's mapper of one record kind (undefined: the format cannot write it). */
function formatRows(format: ExportFormat, kind: ExportRecordKind): RowMapper<ExportRecordKind> | undefined {
  const rows: ExportFormatSpec['rows'] = EXPORT_FORMAT_SPECS[format].rows;
  return rows[kind] as RowMapper<ExportRecordKind> | undefined;
}

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
  /** Progress in input records of the part, on each read that builds rows. */
  onProgress?: (p: JobProgress) => void;
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

/** The formats that write each file type (verl alone writes Parquet). */
const formatsWriting = (file: 'jsonl' | 'parquet'): ExportFormat[] =>
  EXPORT_FORMATS.filter((f) => EXPORT_FORMAT_SPECS[f].file === file);

/**
 * The format of `out`: each format writes Parquet or JSONL (its spec's `file`), and the file's
 * extension must say which — a Parquet file named `.jsonl` (or JSONL named `.parquet`) is a trap
 * for the next tool that opens it. `format` unset: `.parquet` means the one Parquet format (verl);
 * a `.jsonl`/`.json` name needs `--format` (openrlhf, trl and mathshepherd all write JSONL).
 * Throws a UsageError (exit 2).
 */
export function formatForOut(out: string, format: ExportFormat | undefined): ExportFormat {
  const ext = /\.([A-Za-z0-9]+)$/.exec(out)?.[1]?.toLowerCase();
  const parquet = ext === 'parquet';
  const jsonl = ext === 'jsonl' || ext === 'json';
  const parquetFormats = formatsWriting('parquet');
  if (format === undefined) {
    if (parquet && parquetFormats.length === 1) return parquetFormats[0] as ExportFormat;
    throw new UsageError(
      `--out ${out}: ${jsonl || parquet ? `a ${parquet ? 'Parquet' : 'JSONL'} name fits several formats` : 'no .parquet or .jsonl extension'}: pass --format ` +
        `(${EXPORT_FORMATS.join(', ')}; ${parquetFormats.join(', ')} ${parquetFormats.length === 1 ? 'writes' : 'write'} .parquet, the others .jsonl)`,
    );
  }
  const writes = EXPORT_FORMAT_SPECS[format].file;
  if (writes === 'parquet' && !parquet)
    throw new UsageError(
      `--format ${format} writes Parquet, but --out ${out} is not named .parquet: name it ${out.replace(/\.[A-Za-z0-9]+$/, '')}.parquet, or choose a JSONL format (${formatsWriting('jsonl').join(', ')})`,
    );
  if (writes === 'jsonl' && parquet)
    throw new UsageError(
      `--format ${format} writes JSONL, but --out ${out} is named .parquet: name it .jsonl, or pass --format ${parquetFormats.join(' or ')} for Parquet`,
    );
  return format;
}

/** Build one training set from a stepwise output file and write it (`stepwise export`). */
export async function exportTrainingData(o: ExportOptions): Promise<ExportSummary> {
  formatForOut(o.out, o.format);
  const exporter = TASK_EXPORTERS[o.task];
  const rows = exporter && EXPORT_FORMAT_SPECS[o.format] ? formatRows(o.format, exporter.record) : undefined;
  if (!exporter || !rows) {
    throw new UsageError(
      `task ${o.task} cannot be written as ${o.format}; formats for ${o.task}: ${TASK_FORMATS[o.task]?.join(', ') ?? 'none'}`,
    );
  }
  const input = new ExportInput(o.from, o.shard, o.onProgress);
  const summary: ExportSummary = { task: o.task, format: o.format, out: o.out, rows: 0 };
  if (o.shard && o.shard.count > 1) summary.shard = `${o.shard.index}/${o.shard.count}`;
  const ctx: RowContext = {
    task: o.task,
    promptKey: o.promptKey,
    labelKey: o.labelKey,
    dataSource: o.dataSource,
    split: o.split,
    chatTemplate: o.chatTemplate,
  };
  const job: ExportJob<ExportRecordKind> = {
    o,
    input,
    summary,
    formatTitle: EXPORT_FORMAT_SPECS[o.format].title,
    write(simulated, body) {
      const w: RowWriter<unknown> = rows.open?.(o.out, { simulated }) ?? new JsonlRowWriter(o.out, simulated);
      return writeAll(w, () =>
        body((record: ExportRecords[ExportRecordKind]) => w.write(rows.row(record, ctx, w.rows))),
      );
    },
  };
  await (exporter.run as (job: ExportJob<ExportRecordKind>) => Promise<void>)(job);
  return summary;
}
