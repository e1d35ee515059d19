import type { z } from 'zod';
import { InputError, UsageError } from '../core/errors.js';
import type { FileKind } from '../core/file-kind.js';
import { createRng } from '../core/rng.js';
import type { Segmentation } from '../core/segment.js';
import {
  LabelRowSchema,
  SampleRowSchema,
  SegmentRowSchema,
  TaggedTextRowSchema,
} from '../data/record-kinds.js';
import {
  addToPrefixLengthGroups,
  markBalancedByPrefixLength,
  type PrefixLengthGroups,
} from '../label/balance.js';
import { rebuiltDraft, type WrittenDraft } from '../prompts/refine.js';
import type { ExportOptions, ExportSummary, PrefixLengthBalance } from './export.js';
import { checked, type ExportInput } from './export-io.js';
import type { ExportRecordKind, ExportRecords } from './export-records.js';
import { labeledSteps, propagateBackward } from './formats.js';
import {
  emptyJudgeRlStats,
  type JudgeRlOptions,
  judgeRlCandidates,
  markBalancedClasses,
} from './judge-rl.js';
import type { LabeledSolution } from './label-file.js';
import {
  buildLocalRefinePairs,
  globalRefinePairsOf,
  type SampledProblem,
  selfSegmentationPairOf,
  tagSpans,
} from './sft.js';

/**
 * The tasks of `stepwise export`, each turning stepwise's rows into neutral records of one kind
 * (./export-records.ts): which rows it reads, what it keeps (balancing, filters), its counts. How
 * a record becomes a row is the format's (./export-formats.ts), so a task is written in every
 * format with a mapper for its kind.
 */

/** One export run as a task sees it. */
export interface ExportJob<K extends ExportRecordKind> {
  o: ExportOptions;
  input: ExportInput;
  summary: ExportSummary;
  /** The chosen format's name for messages (`TRL`). */
  formatTitle: string;
  /**
   * Open the output in the chosen format, hand `body` an `emit` that writes one record as the
   * format's row, and put the file in place when `body` returns (removed if it throws). Every row
   * says simulated when `simulated` is. Returns the rows written.
   */
  write(
    simulated: boolean,
    body: (emit: (record: ExportRecords[K]) => void) => Promise<void> | void,
  ): Promise<number>;
}

/** One task: the record kind it makes, what it reads, and the run that makes them. */
export interface TaskExporter<K extends ExportRecordKind> {
  record: K;
  /** What its input is (help and docs). */
  reads: string;
  run(job: ExportJob<K>): Promise<void>;
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

/** The signal asked for, else the task's default: the file's first, or the first SORM equivalent it has. */
function pickSignal(present: readonly string[], signalDefault: 'first' | 'sorm', signal?: string): string {
  if (present.length === 0) throw new UsageError('the label file has no labeled chunks');
  const chosen =
    signal ?? (signalDefault === 'sorm' ? SORM_EQUIVALENTS.find((s) => present.includes(s)) : present[0]);
  if (!chosen || !present.includes(chosen)) {
    const wanted = chosen ?? SORM_EQUIVALENTS.join(' / ');
    throw new UsageError(
      `no chunk has a label for signal "${wanted}"; the file has: ${present.join(', ')} (pass --signal)`,
    );
  }
  return chosen;
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

/** Reads the label file for the task, notes whether it is simulated, and picks the signal. */
function labelInput(
  { o, input, summary }: Pick<ExportJob<ExportRecordKind>, 'o' | 'input' | 'summary'>,
  signalDefault: 'first' | 'sorm',
): { parse: (value: unknown, line: number) => LabeledSolution; scan: LabelFileScan; signal: string } {
  const parse = checked(o.from, LabelRowSchema, { kinds: ['label'], who: `export --task ${o.task}` });
  const scan = scanLabelFile(input, parse);
  if (scan.simulated) summary.simulated = true;
  const signal = pickSignal(scan.signals, signalDefault, o.signal);
  summary.signal = signal;
  return { parse, scan, signal };
}

/**
 * judge-rl: with balancing, a first read keeps one position per candidate chunk by class (a few
 * bytes each), balancing picks positions, and a second read writes the picked ones in input order.
 */
const judgeRl: TaskExporter<'judgment'> = {
  record: 'judgment',
  reads: '`stepwise label` output',
  async run(job) {
    const { o, input, summary } = job;
    const { parse, scan, signal } = labelInput(job, 'first');
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
    let positives = 0;
    summary.rows = await job.write(scan.simulated, (emit) => {
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
  },
};

/**
 * prm and sorm: one row per solution (prm) or per labeled prefix (sorm). SORM's balancing reads the
 * file once for each prefix's length and last label (positions only), then again to write.
 */
function stepRows(sorm: boolean): TaskExporter<'steps'> {
  return {
    record: 'steps',
    reads: '`stepwise label` output',
    async run(job) {
      const { o, input, summary } = job;
      const { parse, scan, signal } = labelInput(job, sorm ? 'sorm' : 'first');
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
      summary.rows = await job.write(scan.simulated, (emit) => {
        let at = 0;
        for (const r of solutions()) {
          if (!keep) {
            usable++;
            emit({ solution: r, signal });
            continue;
          }
          const steps = labeledSteps(r, signal).steps.length;
          for (let k = 1; k <= steps; k++)
            if (keep[at++] === 1) emit({ solution: sormPrefixRow(r, k), signal });
        }
      });
      summary.stats = { solutions: scan.records, skippedUnlabeled: scan.records - usable };
      if (summary.byPrefixLength) {
        const lengths = Object.values(summary.byPrefixLength);
        summary.stats.prefixes = lengths.reduce((a, b) => a + b.kept + b.dropped, 0);
        summary.stats.dropped = lengths.reduce((a, b) => a + b.dropped, 0);
      }
    },
  };
}

/**
 * A selfseg input row: a given tagging `{id, problem, text, tagged}`, or a `stepwise segment
 * --segmentation llm` row `{id, problem, text, chunks: [{text, span}], method}` (its tagging built
 * from the spans; only rows the LLM segmented are used: a paragraph fallback teaches nothing about
 * chunking).
 */
type SelfSegInput =
  | { kind: 'tagged'; row: z.infer<typeof TaggedTextRowSchema> }
  | { kind: 'segmented'; row: z.infer<typeof SegmentRowSchema> };

/**
 * selfseg: rows with a given tagging come first, then the LLM-segmented ones (each group in file
 * order), as the in-memory export wrote them: a read for each group.
 */
const selfSegmentation: TaskExporter<'sft'> = {
  record: 'sft',
  reads: '`stepwise segment --segmentation llm` output, or {id, problem, text, tagged} rows',
  async run(job) {
    const { o, input, summary } = job;
    const expect = { kinds: ['segment', 'texts'] as FileKind[], who: 'export --task selfseg' };
    const tagged = checked(o.from, TaggedTextRowSchema, expect);
    const segmented = checked(o.from, SegmentRowSchema, expect);
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
    summary.rows = await job.write(simulated, (emit) => {
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
  },
};

/** refine-global: each sample row's pairs, one row at a time (one seeded stream over the file). */
const globalRefinement: TaskExporter<'sft'> = {
  record: 'sft',
  reads: '`stepwise sample` output',
  async run(job) {
    const { o, input, summary } = job;
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
    summary.rows = await job.write(simulated, (emit) => {
      for (const { record } of input.records(parse))
        for (const p of globalRefinePairsOf(record, rng)) emit(p);
    });
    summary.stats = { problems };
  },
};

/** refine-local: one row per bad solution with a correct continuation, found as each record is read. */
const localRefinement: TaskExporter<'continuation'> = {
  record: 'continuation',
  reads: '`stepwise label` output (with --keep-rollouts, or pass --policy)',
  async run(job) {
    const { o, input, summary } = job;
    const { parse, scan, signal } = labelInput(job, 'sorm');
    if (!scan.keptRollouts && !o.findContinuation) {
      throw new UsageError(
        'refine-local needs a correct continuation of each good prefix: label with --keep-rollouts ' +
          '(the SORM rollouts are reused, as GLoRe does) or pass --policy <spec> to sample one',
      );
    }
    // TRL and OpenRLHF alike would open a new assistant turn after the good prefix if given messages.
    if (!o.chatTemplate)
      throw new UsageError(
        `refine-local as ${job.formatTitle} rows trains the continuation of the model's assistant turn, so the prompt is rendered ` +
          "with the model's own chat template: pass --chat-template FILE (its tokenizer_config.json or .jinja)",
      );
    let noContinuation = 0;
    let fromRollouts = 0;
    let sampled = 0;
    summary.rows = await job.write(scan.simulated, async (emit) => {
      for (const { line, record: r } of input.records(parse)) {
        const { labels } = labeledSteps(r, signal);
        const firstBad = labels.indexOf(false);
        if (firstBad < 0) continue;
        if (r.answer === undefined)
          throw new InputError(
            { file: o.from, line, field: 'answer' },
            `solution ${r.id} has no gold answer`,
          );
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
        emit(pair);
      }
    });
    summary.stats = {
      solutions: scan.records,
      fromKeptRollouts: fromRollouts,
      sampled,
      noCorrectContinuation: noContinuation,
    };
  },
};

/** Every task `stepwise export --task` builds, by name: adding one is an exporter and a line here. */
export const TASK_EXPORTERS = {
  'judge-rl': judgeRl,
  prm: stepRows(false),
  sorm: stepRows(true),
  selfseg: selfSegmentation,
  'refine-global': globalRefinement,
  'refine-local': localRefinement,
} satisfies Record<string, TaskExporter<ExportRecordKind>>;

export type ExportTask = keyof typeof TASK_EXPORTERS;

export const EXPORT_TASKS = Object.keys(TASK_EXPORTERS) as ExportTask[];
