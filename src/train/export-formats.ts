import type { z } from 'zod';
import {
  MathShepherdRowSchema,
  OpenRlhfRowSchema,
  TrlContinuationRowSchema,
  TrlJudgmentRowSchema,
  TrlSftRowSchema,
  TrlStepwiseRowSchema,
  VerlRowSchema,
  VerlSftRowSchema,
} from '../data/record-kinds.js';
import { type ChatTemplate, continueAssistantTurn } from '../prompts/chat-template.js';
import type { RowWriter } from './export-io.js';
import type { ExportRecordKind, ExportRecords, RowContext } from './export-records.js';
import { labeledSteps, toMathShepherd, toOpenRlhfSft, toTrlStepwise } from './formats.js';
import type { SftPair } from './sft.js';
import { verlParquetWriter, verlSftParquetWriter } from './verl.js';

/** How one format writes one kind of record. */
export interface RowMapper<K extends ExportRecordKind, Row = unknown> {
  /**
   * The row's schema (src/data/record-kinds.ts): the row's type is inferred from it, and a reader
   * of the file checks its lines against it.
   */
  schema: z.ZodType;
  /** The engine's row of one record; `index` is its 0-based position in the file. */
  row(record: ExportRecords[K], ctx: RowContext, index: number): Row;
  /** A Parquet format's file with this kind's schema (JSONL formats leave it out: one JSON line a row). */
  open?(out: string, options: { simulated: boolean }): RowWriter<Row>;
}

/** One output format: its file type and a mapper for each record kind it can write. */
export interface ExportFormatSpec {
  /** How messages name the engine. */
  title: string;
  /** `parquet` or `jsonl`: what the `--out` name must end with. */
  file: 'jsonl' | 'parquet';
  rows: { [K in ExportRecordKind]?: RowMapper<K, never> };
}

/**
 * A mapper whose rows are typed by its schema (`z.input`: the row as written, `simulated` left to
 * the writer); the table keeps it as a mapper of its kind.
 */
const mapper = <K extends ExportRecordKind, S extends z.ZodType>(
  m: { schema: S } & Omit<RowMapper<K, z.input<S>>, 'schema'>,
): RowMapper<K, never> => m as unknown as RowMapper<K, never>;

/** OpenRLHF's keys: its `--input_key` / `--label_key`, defaulting as its reward and SFT datasets do. */
function keysOf(ctx: RowContext, defaults: [string, string]): { promptKey: string; labelKey: string } {
  return { promptKey: ctx.promptKey ?? defaults[0], labelKey: ctx.labelKey ?? defaults[1] };
}

/** A continuation record's template: the task refuses to start without one. */
function templateOf(ctx: RowContext): ChatTemplate {
  if (!ctx.chatTemplate) throw new Error(`${ctx.task}: a continuation row needs the model's chat template`);
  return ctx.chatTemplate;
}

/**
 * TRL rows that train a continuation: a conversational row whose prompt ends with an assistant
 * message would be rendered by SFTTrainer with `add_generation_prompt=True` — a new assistant turn
 * after the prefix. So the row is TRL's standard prompt–completion form instead: `prompt` is the
 * text the model's own template renders up to and including the prefix (BOS left to the
 * tokenizer, which TRL calls with special tokens), `completion` the continuation, the only part
 * trained.
 */
function continuationRow(p: SftPair, template: ChatTemplate): z.input<typeof TrlContinuationRowSchema> {
  const last = p.prompt[p.prompt.length - 1];
  const hasPrefix = last?.role === 'assistant';
  const conversation = hasPrefix ? p.prompt.slice(0, -1) : p.prompt;
  return {
    id: p.id,
    prompt: continueAssistantTurn(template, conversation, hasPrefix ? last.content : ''),
    completion: p.completion,
  };
}

/** TRL (huggingface/trl): stepwise supervision for its PRM trainer, prompt–completion for SFT. */
const trl: ExportFormatSpec = {
  title: 'TRL',
  file: 'jsonl',
  rows: {
    judgment: mapper<'judgment', typeof TrlJudgmentRowSchema>({
      schema: TrlJudgmentRowSchema,
      row: (e) => ({ id: e.id, prompt: e.prompt, label: e.label }),
    }),
    steps: mapper<'steps', typeof TrlStepwiseRowSchema>({
      schema: TrlStepwiseRowSchema,
      row: ({ solution, signal }) => ({ id: solution.id, ...toTrlStepwise(solution, signal) }),
    }),
    // Conversational prompt–completion: the completion is the assistant's message.
    sft: mapper<'sft', typeof TrlSftRowSchema>({
      schema: TrlSftRowSchema,
      row: (p) => ({
        id: p.id,
        prompt: p.prompt,
        completion: [{ role: 'assistant', content: p.completion }],
      }),
    }),
    continuation: mapper<'continuation', typeof TrlContinuationRowSchema>({
      schema: TrlContinuationRowSchema,
      row: (p, ctx) => continuationRow(p, templateOf(ctx)),
    }),
  },
};

/** OpenRLHF: keyed JSONL rows (`--input_key`, `--label_key` / `--output_key`). */
const openrlhf: ExportFormatSpec = {
  title: 'OpenRLHF',
  file: 'jsonl',
  rows: {
    judgment: mapper<'judgment', typeof OpenRlhfRowSchema>({
      schema: OpenRlhfRowSchema,
      row: (e, ctx) => {
        const { promptKey, labelKey } = keysOf(ctx, ['input', 'label']);
        return { id: e.id, [promptKey]: e.prompt, [labelKey]: e.label };
      },
    }),
    // OpenRLHF's ProcessRewardDataset asserts that the label is a list: one reward token per
    // placeholder `ки` in the input (openrlhf/datasets/process_reward_dataset.py).
    steps: mapper<'steps', typeof OpenRlhfRowSchema>({
      schema: OpenRlhfRowSchema,
      row: ({ solution, signal }, ctx) => {
        const { promptKey, labelKey } = keysOf(ctx, ['input', 'label']);
        return {
          id: solution.id,
          [promptKey]: toMathShepherd(solution, signal, ctx.task).input,
          [labelKey]: labeledSteps(solution, signal).labels.map((l) => (l ? '+' : '-')),
        };
      },
    }),
    sft: mapper<'sft', typeof OpenRlhfRowSchema>({
      schema: OpenRlhfRowSchema,
      row: (p, ctx) => toOpenRlhfSft(p, keysOf(ctx, ['prompt', 'response'])),
    }),
    continuation: mapper<'continuation', typeof OpenRlhfRowSchema>({
      schema: OpenRlhfRowSchema,
      row: (p, ctx) => toOpenRlhfSft(p, keysOf(ctx, ['prompt', 'response']), templateOf(ctx)),
    }),
  },
};

/** verl: Parquet, its RL dataset's columns for judge prompts, its SFT datasets' for pairs (./verl.ts). */
const verl: ExportFormatSpec = {
  title: 'verl',
  file: 'parquet',
  rows: {
    judgment: mapper<'judgment', typeof VerlRowSchema>({
      schema: VerlRowSchema,
      open: (out, { simulated }) => verlParquetWriter(out, { simulated }),
      row: (e, ctx, index) => ({
        data_source: ctx.dataSource ?? `stepwise/${ctx.task}`,
        prompt: e.prompt,
        ability: 'stepwise-judge',
        reward_model: { style: 'rule' as const, ground_truth: e.label },
        extra_info: {
          split: ctx.split ?? 'train',
          index,
          id: e.solutionId,
          chunk_index: e.chunkIndex,
          signal: e.signal,
          question: e.problem,
        },
      }),
    }),
    sft: mapper<'sft', typeof VerlSftRowSchema>({
      schema: VerlSftRowSchema,
      open: (out, { simulated }) => verlSftParquetWriter(out, { simulated }),
      row: (p) => ({
        id: p.id,
        messages: [...p.prompt, { role: 'assistant' as const, content: p.completion }],
        question: p.prompt[p.prompt.length - 1].content,
        answer: p.completion,
      }),
    }),
  },
};

/** Math-Shepherd: steps tagged `ки` in `input`, `+`/`-` at the same places in `label`. */
const mathshepherd: ExportFormatSpec = {
  title: 'Math-Shepherd',
  file: 'jsonl',
  rows: {
    steps: mapper<'steps', typeof MathShepherdRowSchema>({
      schema: MathShepherdRowSchema,
      row: ({ solution, signal }, ctx) => toMathShepherd(solution, signal, ctx.task),
    }),
  },
};

/** Every format `stepwise export --format` writes, by name: adding one is a spec and a line here. */
export const EXPORT_FORMAT_SPECS = { verl, openrlhf, trl, mathshepherd } satisfies Record<
  string,
  ExportFormatSpec
>;

export type ExportFormat = keyof typeof EXPORT_FORMAT_SPECS;

export const EXPORT_FORMATS = Object.keys(EXPORT_FORMAT_SPECS) as ExportFormat[];
