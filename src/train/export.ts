import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { InputError, UsageError } from '../core/errors.js';
import { createRng } from '../core/rng.js';
import type { Segmentation } from '../core/segment.js';
import { readJsonl } from '../jobs/jsonl.js';
import { balanceByPrefixLength } from '../label/balance.js';
import { type ChatTemplate, continueAssistantTurn } from '../prompts/chat-template.js';
import { rebuiltDraft, type WrittenDraft } from '../prompts/refine.js';
import { labeledSteps, propagateBackward, toMathShepherd, toTrlStepwise } from './formats.js';
import { buildJudgeRlSet } from './judge-rl.js';
import { type LabeledSolution, readLabelFile, signalsIn, validateRows } from './label-file.js';
import {
  buildGlobalRefinePairs,
  buildLocalRefinePairs,
  buildSelfSegmentationPairs,
  type LocalRefineSource,
  type SftPair,
  tagSpans,
} from './sft.js';
import { type VerlRow, writeVerlParquet, writeVerlSftParquet } from './verl.js';

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
  /** sorm: per prefix length (chunks), the prefixes found and how many balancing kept and dropped. */
  byPrefixLength?: Record<string, PrefixLengthBalance>;
}

function writeJsonl(path: string, rows: readonly unknown[], simulated = false): void {
  mkdirSync(dirname(path), { recursive: true });
  // Rows built from a simulated run say so, each on its own line.
  const lines = rows.map((r) => JSON.stringify(simulated ? { ...(r as object), simulated: true } : r));
  writeFileSync(path, lines.join('\n') + (rows.length ? '\n' : ''));
}

/** Whether the input file comes from a simulated run (any of its records says `simulated: true`). */
function fromSimulatedRun(file: string): boolean {
  return readJsonl(file, { skipInvalid: true }).lines.some(
    ({ value }) => (value as { simulated?: unknown } | null)?.simulated === true,
  );
}

/**
 * SORM's label (GLoRe: positive iff some rollout from the prefix is correct) is the same
 * quantity as Math-Shepherd's hard label and Abs-Q, so any of them serves when `sorm` is absent.
 */
const SORM_EQUIVALENTS = ['sorm', 'ms-hard', 'abs-q'];

function pickSignal(rows: readonly LabeledSolution[], task: ExportTask, signal?: string): string {
  const present = signalsIn(rows);
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

/** SFT pairs in the chosen format: TRL conversational prompt-completion, or OpenRLHF keyed JSONL. */
function sftRows(
  pairs: readonly SftPair[],
  format: ExportFormat,
  promptKey: string,
  labelKey: string,
): unknown[] {
  if (format === 'trl') {
    return pairs.map((p) => ({
      id: p.id,
      prompt: p.prompt,
      completion: [{ role: 'assistant', content: p.completion }],
    }));
  }
  return pairs.map((p) => ({ id: p.id, [promptKey]: p.prompt, [labelKey]: p.completion }));
}

/**
 * SORM training data (GLoRe): one row per labeled prefix — the solution cut after chunk k, with the
 * labels of its chunks, trained on the last one (TRL: `PRMConfig(train_on_last_step_only=True)`) —
 * then balanced per prefix length: at each length as many rows with a positive last label as with
 * a negative one (seeded down-sampling of the larger class; a length with one class only keeps
 * nothing). Row ids are `<solution id>@<k>`.
 */
export function sormPrefixRows(
  rows: readonly LabeledSolution[],
  signal: string,
  seed: number,
): { rows: LabeledSolution[]; byPrefixLength: Record<string, PrefixLengthBalance> } {
  const prefixes: Array<{ row: LabeledSolution; length: number; positive: boolean }> = [];
  for (const r of rows) {
    const { labels } = labeledSteps(r, signal);
    labels.forEach((positive, i) => {
      prefixes.push({
        row: { ...r, id: `${r.id}@${i + 1}`, chunks: r.chunks.slice(0, i + 1) },
        length: i + 1,
        positive,
      });
    });
  }
  const kept = balanceByPrefixLength(
    prefixes,
    (p) => ({ prefixLength: p.length, positive: p.positive }),
    createRng(seed),
  );
  const byPrefixLength: Record<string, PrefixLengthBalance> = {};
  for (const p of prefixes) {
    byPrefixLength[p.length] ??= { positive: 0, negative: 0, kept: 0, dropped: 0 };
    const b = byPrefixLength[p.length];
    if (p.positive) b.positive++;
    else b.negative++;
  }
  for (const b of Object.values(byPrefixLength)) {
    b.kept = 2 * Math.min(b.positive, b.negative);
    b.dropped = b.positive + b.negative - b.kept;
  }
  return { rows: kept.map((p) => p.row), byPrefixLength };
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
  r: LabeledSolution,
  chunks: string[],
  segmentation: Segmentation,
): WrittenDraft {
  if (!r.written) return rebuiltDraft(chunks, segmentation);
  const { text, ends } = r.written;
  const bad = (why: string) =>
    new UsageError(`${file}: solution ${r.id}: "written" does not match its chunks (${why})`);
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
function continuationRows(pairs: readonly SftPair[], template: ChatTemplate): unknown[] {
  return pairs.map((p) => {
    const last = p.prompt[p.prompt.length - 1];
    const hasPrefix = last?.role === 'assistant';
    const conversation = hasPrefix ? p.prompt.slice(0, -1) : p.prompt;
    return {
      id: p.id,
      prompt: continueAssistantTurn(template, conversation, hasPrefix ? last.content : ''),
      completion: p.completion,
    };
  });
}

/** Build one training set from a stepwise output file and write it (`stepwise export`). */
export async function exportTrainingData(o: ExportOptions): Promise<ExportSummary> {
  if (!TASK_FORMATS[o.task]?.includes(o.format)) {
    throw new UsageError(
      `task ${o.task} cannot be written as ${o.format}; formats for ${o.task}: ${TASK_FORMATS[o.task]?.join(', ') ?? 'none'}`,
    );
  }
  const promptKey =
    o.promptKey ?? (o.task === 'judge-rl' || o.task === 'prm' || o.task === 'sorm' ? 'input' : 'prompt');
  const labelKey =
    o.labelKey ?? (o.task === 'judge-rl' || o.task === 'prm' || o.task === 'sorm' ? 'label' : 'response');
  const summary: ExportSummary = { task: o.task, format: o.format, out: o.out, rows: 0 };
  const simulated = fromSimulatedRun(o.from);
  if (simulated) summary.simulated = true;

  if (o.task === 'judge-rl') {
    const labeled = readLabelFile(o.from, `export --task ${o.task}`);
    const signal = pickSignal(labeled, o.task, o.signal);
    const set = buildJudgeRlSet(labeled, {
      signal,
      seed: o.seed,
      maxPromptTokens: o.maxPromptTokens,
      balance: !o.noBalance,
    });
    summary.signal = signal;
    summary.stats = set.stats;
    summary.rows = set.examples.length;
    if (o.format === 'verl') {
      const rows: VerlRow[] = set.examples.map((e, index) => ({
        data_source: o.dataSource ?? 'stepwise/judge-rl',
        prompt: e.prompt,
        ability: 'stepwise-judge',
        reward_model: { style: 'rule', ground_truth: e.label },
        extra_info: {
          split: o.split ?? 'train',
          index,
          id: e.solutionId,
          chunk_index: e.chunkIndex,
          signal,
          question: e.problem,
        },
      }));
      mkdirSync(dirname(o.out), { recursive: true });
      writeVerlParquet(o.out, rows);
    } else if (o.format === 'openrlhf') {
      writeJsonl(
        o.out,
        set.examples.map((e) => ({ id: e.id, [promptKey]: e.prompt, [labelKey]: e.label })),
        simulated,
      );
    } else {
      writeJsonl(
        o.out,
        set.examples.map((e) => ({ id: e.id, prompt: e.prompt, label: e.label })),
        simulated,
      );
    }
    return summary;
  }

  if (o.task === 'prm' || o.task === 'sorm') {
    const labeled = readLabelFile(o.from, `export --task ${o.task}`);
    const signal = pickSignal(labeled, o.task, o.signal);
    summary.signal = signal;
    let rows = labeled
      .map((r) => {
        if (o.task !== 'sorm') return r;
        // SORM: a prefix before a positive one is positive too.
        const { labels } = labeledSteps(r, signal);
        const back = propagateBackward(labels);
        return {
          ...r,
          chunks: r.chunks.map((c, i) =>
            i < back.length ? { ...c, labels: { ...c.labels, [signal]: back[i] } } : c,
          ),
        };
      })
      .filter((r) => labeledSteps(r, signal).steps.length > 0);
    const solutions = rows.length;
    if (o.task === 'sorm') {
      const balanced = sormPrefixRows(rows, signal, o.seed ?? 0);
      rows = balanced.rows;
      summary.byPrefixLength = balanced.byPrefixLength;
    }
    let out: unknown[];
    if (o.format === 'trl') out = rows.map((r) => ({ id: r.id, ...toTrlStepwise(r, signal) }));
    else if (o.format === 'mathshepherd') out = rows.map((r) => toMathShepherd(r, signal, o.task));
    // OpenRLHF's ProcessRewardDataset asserts that the label is a list: one reward token per
    // placeholder `ки` in the input (openrlhf/datasets/process_reward_dataset.py).
    else
      out = rows.map((r) => ({
        id: r.id,
        [promptKey]: toMathShepherd(r, signal, o.task).input,
        [labelKey]: labeledSteps(r, signal).labels.map((l) => (l ? '+' : '-')),
      }));
    summary.rows = out.length;
    summary.stats = { solutions: labeled.length, skippedUnlabeled: labeled.length - solutions };
    if (summary.byPrefixLength) {
      const lengths = Object.values(summary.byPrefixLength);
      summary.stats.prefixes = lengths.reduce((a, b) => a + b.kept + b.dropped, 0);
      summary.stats.dropped = lengths.reduce((a, b) => a + b.dropped, 0);
    }
    writeJsonl(o.out, out, simulated);
    return summary;
  }

  let pairs: SftPair[];
  if (o.task === 'selfseg') {
    const lines = readJsonl(o.from).lines;
    const isTagged = (l: { value: unknown }) =>
      typeof (l.value as { tagged?: unknown } | null)?.tagged === 'string';
    const given = validateRows(o.from, lines.filter(isTagged), TaggedRowSchema, {
      kinds: ['segment', 'texts'],
      who: 'export --task selfseg',
    });
    const segmentedLines = lines.filter((l) => !isTagged(l));
    const segmented = validateRows(o.from, segmentedLines, SegmentedRowSchema, {
      kinds: ['segment', 'texts'],
      who: 'export --task selfseg',
    });
    let fallbacks = 0;
    const tagged: Array<{ id: string; problem: string; text: string; tagged: string }> = given.map((r) => ({
      id: r.id,
      problem: r.problem,
      text: r.text,
      tagged: r.tagged,
    }));
    segmented.forEach((r, k) => {
      if (r.method !== 'llm') {
        fallbacks++;
        return;
      }
      r.chunks.forEach((c, i) => {
        if (r.text.slice(c.span.start, c.span.end) !== c.text)
          throw new InputError(
            { file: o.from, line: segmentedLines[k].line, field: `chunks.${i}.span` },
            'the chunk text is not text.slice(span.start, span.end)',
          );
      });
      tagged.push({
        id: r.id,
        problem: r.problem,
        text: r.text,
        tagged: tagSpans(
          r.text,
          r.chunks.map((c) => c.span),
        ),
      });
    });
    const built = buildSelfSegmentationPairs(tagged);
    pairs = built.pairs;
    summary.stats = { inputs: lines.length, paragraphFallbacks: fallbacks, rejected: built.rejected.length };
    if (o.format === 'verl') {
      writeVerlSftParquet(
        o.out,
        pairs.map((p) => ({
          id: p.id,
          prompt: p.prompt[p.prompt.length - 1].content,
          response: p.completion,
        })),
      );
      summary.rows = pairs.length;
      return summary;
    }
  } else if (o.task === 'refine-global') {
    const rows = validateRows(o.from, readJsonl(o.from).lines, SampleRowSchema, {
      kinds: ['sample'],
      who: `export --task ${o.task}`,
    }).map((r, k) => {
      const question = r.question ?? r.problem;
      if (question === undefined) {
        throw new UsageError(`${o.from}: row ${k + 1} (${r.id}) has neither "question" nor "problem"`);
      }
      return {
        id: r.id,
        question,
        samples: r.samples,
        ...(r.segmentation ? { segmentation: r.segmentation } : {}),
      };
    });
    pairs = buildGlobalRefinePairs(rows, o.seed);
    summary.stats = { problems: rows.length };
  } else {
    const labeled = readLabelFile(o.from, `export --task ${o.task}`);
    const signal = pickSignal(labeled, o.task, o.signal);
    summary.signal = signal;
    const kept = labeled.some(hasKeptRollouts);
    if (!kept && !o.findContinuation) {
      throw new UsageError(
        'refine-local needs a correct continuation of each good prefix: label with --keep-rollouts ' +
          '(the SORM rollouts are reused, as GLoRe does) or pass --policy <spec> to sample one',
      );
    }
    if (o.format === 'trl' && !o.chatTemplate)
      throw new UsageError(
        "refine-local as TRL rows trains the continuation of the model's assistant turn, so the prompt is rendered " +
          "with the model's own chat template: pass --chat-template FILE (its tokenizer_config.json or .jinja)",
      );
    const sources: LocalRefineSource[] = [];
    let noContinuation = 0;
    let fromRollouts = 0;
    let sampled = 0;
    for (const r of labeled) {
      const { labels } = labeledSteps(r, signal);
      const firstBad = labels.indexOf(false);
      if (firstBad < 0) continue;
      if (r.answer === undefined)
        throw new UsageError(`${o.from}: solution ${r.id} has no "answer" (gold) field`);
      const chunks = r.chunks.map((c) => c.text);
      const segmentation = r.segmentation ?? 'paragraph';
      const written = writtenDraftOf(o.from, r, chunks, segmentation);
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
      sources.push({
        id: r.id,
        question: r.problem,
        chunks,
        firstBad,
        correctContinuation: continuation,
        segmentation,
        written,
      });
    }
    pairs = buildLocalRefinePairs(sources);
    summary.stats = {
      solutions: labeled.length,
      fromKeptRollouts: fromRollouts,
      sampled,
      noCorrectContinuation: noContinuation,
    };
  }
  const out =
    o.task === 'refine-local' && o.format === 'trl' && o.chatTemplate
      ? continuationRows(pairs, o.chatTemplate)
      : sftRows(pairs, o.format, promptKey, labelKey);
  summary.rows = out.length;
  writeJsonl(o.out, out, simulated);
  return summary;
}
