import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ColumnSource, fileWriter, ParquetWriter } from 'hyparquet-writer';
import type { z } from 'zod';
import type { ChatMessage } from '../core/model.js';
import type { VerlRowSchema, VerlSftRowSchema } from '../data/record-kinds.js';
import { removeOnExit } from '../jobs/remove-on-exit.js';

/** hyparquet-writer's schema element (its own copy of hyparquet's type). */
type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/** One verl RL row (INTERFACES.md): what verl's RLHFDataset reads from Parquet (its kind's schema, src/data/record-kinds.ts). */
export type VerlRow = z.input<typeof VerlRowSchema>;

/**
 * `extra_info` has a fixed struct layout (Parquet needs one schema for all rows): the split, the
 * row index, the source id, the chunk index (−1 when the row is a whole solution), the signal, and
 * the problem text. verl hands `extra_info` to the reward function but never the prompt, so the
 * question travels here (the key verl's own data recipes use), for a reward that needs it. Files of
 * the simulated world's rows have a seventh field, `simulated: true`, so a trainer or reward sees
 * the rows are not real data; files of real labels keep the six-field layout.
 */
export type VerlExtraInfo = VerlRow['extra_info'];

const str = (name: string, repetition: 'REQUIRED' | 'OPTIONAL' = 'OPTIONAL') =>
  ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: repetition }) as const;

/** A list<struct<role, content>> column in the standard three-level LIST layout (as pyarrow writes). */
const messageListColumns = (name: string) =>
  [
    { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
    str('role'),
    str('content'),
  ] as const;

/**
 * The explicit nested schema: `prompt` is list<struct<role, content>> in the standard three-level
 * LIST layout (what pandas/pyarrow write and verl reads), `reward_model` and `extra_info` structs.
 */
export const VERL_SCHEMA = [
  { name: 'schema', num_children: 5 },
  str('data_source'),
  ...messageListColumns('prompt'),
  str('ability'),
  { name: 'reward_model', repetition_type: 'OPTIONAL', num_children: 2 },
  str('style'),
  str('ground_truth'),
  { name: 'extra_info', repetition_type: 'OPTIONAL', num_children: 6 },
  str('split'),
  { name: 'index', type: 'INT64', repetition_type: 'OPTIONAL' },
  str('id'),
  { name: 'chunk_index', type: 'INT64', repetition_type: 'OPTIONAL' },
  str('signal'),
  str('question'),
];

/** {@link VERL_SCHEMA} with `extra_info.simulated` (BOOLEAN): the layout of a simulated world's rows. */
export const VERL_SIMULATED_SCHEMA = [
  ...VERL_SCHEMA.map((e) => (e.name === 'extra_info' ? { ...e, num_children: 7 } : e)),
  { name: 'simulated', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
];

/** The verl columns of a batch of rows (int64 columns take BigInt). */
function verlColumns(rows: readonly VerlRow[], simulated = false): ColumnSource[] {
  return [
    { name: 'data_source', data: rows.map((r) => r.data_source) },
    { name: 'prompt', data: rows.map((r) => r.prompt.map((m) => ({ role: m.role, content: m.content }))) },
    { name: 'ability', data: rows.map((r) => r.ability) },
    { name: 'reward_model', data: rows.map((r) => ({ ...r.reward_model })) },
    {
      name: 'extra_info',
      data: rows.map((r) => ({
        split: r.extra_info.split,
        index: BigInt(r.extra_info.index),
        id: r.extra_info.id,
        chunk_index: BigInt(r.extra_info.chunk_index),
        signal: r.extra_info.signal,
        question: r.extra_info.question,
        ...(simulated ? { simulated: true } : {}),
      })),
    },
  ];
}

/** Rows in a Parquet row group at most: a group is encoded from memory, so its size bounds the writer's. */
export const ROW_GROUP_ROWS = 1000;
/**
 * …and at most about 1 MB of text (judge prompts are a few KB each, some much longer): measured on a
 * 40 MB label file, hyparquet-writer's peak memory while encoding a group is many times the group's
 * text (peak RSS +11 MB over a tiny export with 1 MB groups, +70 MB with 2 MB, +100 MB with 16 MB).
 * Each group adds ~1 KB of footer metadata, kept until the file is closed.
 */
export const ROW_GROUP_TEXT_BYTES = 1 << 20;

/**
 * A Parquet file written a row group at a time: rows are buffered until the group is full
 * ({@link ROW_GROUP_ROWS} rows or {@link ROW_GROUP_TEXT_BYTES} of text), encoded, and flushed to a
 * temporary file beside `path` (hyparquet-writer's file writer flushes every 1 MB); `close` writes
 * the footer and renames it into place, `abort` removes it. Memory holds one group and the groups'
 * metadata, whatever the file's size. A file of at most 1,000 rows and 1 MB of text is one group,
 * byte for byte what one `parquetWrite` call writes; a bigger one has more, smaller groups (the
 * same rows).
 */
export class ParquetRowWriter<T> {
  private readonly tmp: string;
  private readonly pq: ParquetWriter;
  private batch: T[] = [];
  private batchBytes = 0;
  private readonly finished: () => void;
  rows = 0;

  constructor(
    private readonly path: string,
    schema: SchemaElement[],
    private readonly columns: (rows: readonly T[]) => ColumnSource[],
    private readonly textBytes: (row: T) => number,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.tmp = `${path}.tmp-${process.pid}`;
    this.finished = removeOnExit(this.tmp);
    this.pq = new ParquetWriter({ writer: fileWriter(this.tmp), schema });
  }

  write(row: T): void {
    this.batch.push(row);
    this.rows++;
    this.batchBytes += this.textBytes(row);
    if (this.batch.length >= ROW_GROUP_ROWS || this.batchBytes >= ROW_GROUP_TEXT_BYTES) this.flush();
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    void this.pq.write({ columnData: this.columns(this.batch), rowGroupSize: this.batch.length });
    this.batch = [];
    this.batchBytes = 0;
  }

  close(): void {
    this.flush();
    void this.pq.finish();
    renameSync(this.tmp, this.path);
    this.finished();
  }

  abort(): void {
    rmSync(this.tmp, { force: true });
    this.finished();
  }
}

const promptBytes = (messages: readonly ChatMessage[]) => messages.reduce((n, m) => n + m.content.length, 0);

/**
 * A verl RL Parquet file written as rows come (see {@link ParquetRowWriter}). With `simulated`
 * every row's `extra_info` carries `simulated: true` ({@link VERL_SIMULATED_SCHEMA}).
 */
export function verlParquetWriter(
  path: string,
  options: { simulated?: boolean } = {},
): ParquetRowWriter<VerlRow> {
  const simulated = options.simulated === true;
  return new ParquetRowWriter<VerlRow>(
    path,
    // biome-ignore lint/suspicious/noExplicitAny: hyparquet-writer's SchemaElement type is wider than our literal
    (simulated ? VERL_SIMULATED_SCHEMA : VERL_SCHEMA) as any,
    (rows) => verlColumns(rows, simulated),
    (r) => promptBytes(r.prompt) + r.extra_info.question.length,
  );
}

/**
 * One verl SFT row, readable by both of verl's SFT trainers without overriding a key (volcengine/verl
 * b178a3c): the current `verl/trainer/sft_trainer.py` always builds a `MultiTurnSFTDataset`
 * (verl/utils/dataset/multiturn_sft_dataset.py), which reads the `messages` column (its
 * `messages_key` default) and trains every assistant message; the older
 * `verl/trainer/fsdp_sft_trainer.py`, with `config/sft_trainer.yaml`, reads the single-turn
 * `question` / `answer` columns (its `data.prompt_key` / `data.response_key` defaults) and wraps the
 * question as the user message itself.
 */
export type VerlSftRow = z.input<typeof VerlSftRowSchema>;

/** The SFT schema: `messages` as list<struct<role, content>> (three-level LIST, as pyarrow writes). */
export const VERL_SFT_SCHEMA = [
  { name: 'schema', num_children: 4 },
  str('id'),
  ...messageListColumns('messages'),
  str('question'),
  str('answer'),
];

const sftColumns = (rows: readonly VerlSftRow[]): ColumnSource[] => [
  { name: 'id', data: rows.map((r) => r.id) },
  { name: 'messages', data: rows.map((r) => r.messages.map((m) => ({ role: m.role, content: m.content }))) },
  { name: 'question', data: rows.map((r) => r.question) },
  { name: 'answer', data: rows.map((r) => r.answer) },
];

/**
 * A verl SFT Parquet file (`id`, `messages`, `question`, `answer`) written as rows come; with
 * `simulated`, a fifth column `simulated` (true on every row) says the data is the simulated world's.
 */
export function verlSftParquetWriter(
  path: string,
  options: { simulated?: boolean } = {},
): ParquetRowWriter<VerlSftRow> {
  const simulated = options.simulated === true;
  const schema = simulated
    ? [
        { ...VERL_SFT_SCHEMA[0], num_children: 5 },
        ...VERL_SFT_SCHEMA.slice(1),
        { name: 'simulated', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
      ]
    : VERL_SFT_SCHEMA;
  return new ParquetRowWriter<VerlSftRow>(
    path,
    // biome-ignore lint/suspicious/noExplicitAny: hyparquet-writer's SchemaElement type is wider than our literal
    schema as any,
    (rows) =>
      simulated ? [...sftColumns(rows), { name: 'simulated', data: rows.map(() => true) }] : sftColumns(rows),
    (r) => r.id.length + promptBytes(r.messages) + r.question.length,
  );
}
