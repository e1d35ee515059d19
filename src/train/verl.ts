import { writeFileSync } from 'node:fs';
import { ByteWriter, parquetWrite } from 'hyparquet-writer';
import type { ChatMessage } from '../models/types.js';

/** One verl RL row (INTERFACES.md): what verl's RLHFDataset reads from Parquet. */
export interface VerlRow {
  data_source: string;
  prompt: ChatMessage[];
  ability: string;
  reward_model: { style: 'rule' | 'model'; ground_truth: string };
  extra_info: VerlExtraInfo;
}

/**
 * `extra_info` has a fixed struct layout (Parquet needs one schema for all rows): the split, the
 * row index, the source id, the chunk index (−1 when the row is a whole solution), the signal, and
 * the problem text. verl hands `extra_info` to the reward function but never the prompt, so the
 * question travels here (the key verl's own data recipes use), for a reward that needs it.
 */
export interface VerlExtraInfo {
  split: string;
  index: number;
  id: string;
  chunk_index: number;
  signal: string;
  question: string;
}

const str = (name: string, repetition: 'REQUIRED' | 'OPTIONAL' = 'OPTIONAL') =>
  ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: repetition }) as const;

/**
 * The explicit nested schema: `prompt` is list<struct<role, content>> in the standard three-level
 * LIST layout (what pandas/pyarrow write and verl reads), `reward_model` and `extra_info` structs.
 */
export const VERL_SCHEMA = [
  { name: 'schema', num_children: 5 },
  str('data_source'),
  { name: 'prompt', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
  str('role'),
  str('content'),
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

/** Encode rows as verl Parquet bytes. */
export function verlParquetBuffer(rows: readonly VerlRow[]): ArrayBuffer {
  const writer = new ByteWriter();
  parquetWrite({
    writer,
    // biome-ignore lint/suspicious/noExplicitAny: hyparquet-writer's SchemaElement type is wider than our literal
    schema: VERL_SCHEMA as any,
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.data_source) },
      { name: 'prompt', data: rows.map((r) => r.prompt.map((m) => ({ role: m.role, content: m.content }))) },
      { name: 'ability', data: rows.map((r) => r.ability) },
      { name: 'reward_model', data: rows.map((r) => ({ ...r.reward_model })) },
      {
        name: 'extra_info',
        data: rows.map((r) => ({
          split: r.extra_info.split,
          // int64 columns take BigInt.
          index: BigInt(r.extra_info.index),
          id: r.extra_info.id,
          chunk_index: BigInt(r.extra_info.chunk_index),
          signal: r.extra_info.signal,
          question: r.extra_info.question,
        })),
      },
    ],
  });
  return writer.getBuffer();
}

export function writeVerlParquet(path: string, rows: readonly VerlRow[]): void {
  writeFileSync(path, new Uint8Array(verlParquetBuffer(rows)));
}

/**
 * One verl SFT row: verl's single-turn `SFTDataset` (verl/utils/dataset/sft_dataset.py) reads the
 * `prompt` column as the user message (it applies the chat template itself) and the `response`
 * column as the target; those are its default `data.prompt_key` / `data.response_key`.
 */
export interface VerlSftRow {
  id: string;
  prompt: string;
  response: string;
}

/** Write verl SFT rows as Parquet (string columns `id`, `prompt`, `response`). */
export function writeVerlSftParquet(path: string, rows: readonly VerlSftRow[]): void {
  const writer = new ByteWriter();
  parquetWrite({
    writer,
    columnData: [
      { name: 'id', data: rows.map((r) => r.id), type: 'STRING' },
      { name: 'prompt', data: rows.map((r) => r.prompt), type: 'STRING' },
      { name: 'response', data: rows.map((r) => r.response), type: 'STRING' },
    ],
  });
  writeFileSync(path, new Uint8Array(writer.getBuffer()));
}
