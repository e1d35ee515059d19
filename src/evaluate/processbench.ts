import { closeSync, existsSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import type { z } from 'zod';
import { addCosts, emptyCost } from '../core/cost.js';
import { InputError, StepwiseError, UsageError } from '../core/errors.js';
import { wrongKindError } from '../core/file-kind.js';
import type { Segmentation } from '../core/segment.js';
import type { Cost, Problem } from '../core/types.js';
import { loadProcessBench, PROCESSBENCH_SUBSETS, processBenchSource } from '../data/processbench.js';
import { type PredictionOutputRowSchema, PredictionRowSchema, parseRecord } from '../data/record-kinds.js';
import type { RecordSource } from '../data/records.js';
import type { ProcessBenchRecord } from '../data/types.js';
import { jsonArrayError, readLinesSync } from '../jobs/lines.js';
import type { ResumeCounts } from '../jobs/made-from.js';
import { type JobProgress, runStreamJob, type Shard } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import { formatFailureShare, repliesOf, worldOfJudge } from '../judge/common.js';
import type { StepJudge } from '../judge/types.js';
import { BatchPending } from '../models/batch.js';
import { isSimModelName } from '../models/simulated.js';
import {
  firstBelow,
  type ProcessBenchScore,
  processBenchScore,
  processBenchScoreAccumulator,
  type ScoredSample,
  type SubsetMetrics,
  selectThreshold,
  type ThresholdChoice,
} from './metrics.js';

/**
 * `n` samples spread evenly over `records` (indices ⌊i·len/n⌋), in file order. ProcessBench files
 * list the erroneous samples first, so the first n would hold no all-correct sample at all.
 */
export function spreadSample<T>(records: readonly T[], n: number | undefined): T[] {
  if (n === undefined || n >= records.length) return [...records];
  return Array.from({ length: n }, (_, i) => records[Math.floor((i * records.length) / n)]);
}

/**
 * `n` samples that keep both classes (erroneous, all-correct) in their shares of `records`,
 * each class spread evenly, in file order: a fixed stride alone can land on one class only when
 * a file alternates them. Each present class keeps at least one sample when n ≥ 2.
 */
export function stratifiedSample(
  records: readonly ProcessBenchRecord[],
  n: number | undefined,
): ProcessBenchRecord[] {
  if (n === undefined || n >= records.length) return [...records];
  const wrong = records.filter((r) => r.label !== -1);
  const right = records.filter((r) => r.label === -1);
  let takeWrong = Math.round((n * wrong.length) / records.length);
  if (n >= 2 && wrong.length > 0 && right.length > 0) takeWrong = Math.min(Math.max(takeWrong, 1), n - 1);
  const keep = new Set([...spreadSample(wrong, takeWrong), ...spreadSample(right, n - takeWrong)]);
  return records.filter((r) => keep.has(r));
}

/**
 * Load ProcessBench-format samples: the given subsets (default the four) from a folder, or one
 * ProcessBench-format file (its subset is the file name). `limit` takes that many samples per
 * subset, spread evenly over the subset's file so both classes stay represented.
 */
export async function loadProcessBenchSamples(
  options: { path?: string; subsets?: readonly string[]; limit?: number } = {},
): Promise<ProcessBenchRecord[]> {
  const isFile =
    options.path !== undefined && existsSync(options.path) && !statSync(options.path).isDirectory();
  const groups: ProcessBenchRecord[][] = [];
  if (isFile) {
    const loaded = await loadProcessBench({ path: options.path });
    const wanted = options.subsets;
    const names = [...new Set(loaded.records.map((r) => r.subset))];
    for (const name of names) {
      if (wanted && !wanted.includes(name)) continue;
      groups.push(loaded.records.filter((r) => r.subset === name));
    }
  } else {
    for (const subset of options.subsets ?? PROCESSBENCH_SUBSETS) {
      groups.push((await loadProcessBench({ path: options.path, split: subset })).records);
    }
  }
  return groups.flatMap((g) => stratifiedSample(g, options.limit));
}

/** A ProcessBench sample as a `Problem` for a judge (ProcessBench has no gold answers: `answer` is empty). */
export function processBenchProblem(r: ProcessBenchRecord): Problem {
  return {
    id: r.id,
    question: r.problem,
    answer: '',
    domain: 'math',
    source: `processbench/${r.subset}`,
    meta: { generator: r.generator, finalAnswerCorrect: r.final_answer_correct },
  };
}

/** One line of the predictions file, as its strict schema declares (src/data/record-kinds.ts). */
export type ProcessBenchPrediction = z.infer<typeof PredictionOutputRowSchema>;

/** How predictions are made from a judge's output. */
export type ThresholdMode =
  /** The judge's own verdicts, with early exit at the first negative. */
  | { mode: 'verdict' }
  /** A fixed threshold on chunk scores (every chunk scored). */
  | { mode: 'fixed'; value: number }
  /** The threshold that maximises F1 on one subset (ProcessBench: gsm8k), applied to every subset. */
  | { mode: 'auto'; subset: string };

export interface ProcessBenchRunOptions {
  judge: StepJudge;
  /** The samples: a list, or read as the job goes ({@link scanProcessBenchSamples}, which checked the ids). */
  samples: readonly ProcessBenchRecord[] | ProcessBenchSamples;
  /** Predictions JSONL (resumable: lines already there are not judged again). */
  predictionsPath: string;
  /** Default: `auto` on gsm8k for scalar judges, `verdict` otherwise. */
  threshold?: ThresholdMode;
  votes?: number;
  /** Samples judged at once. Default 16. */
  concurrency?: number;
  /** Only this part of the samples (by a hash of the sample id); parts join with `stepwise merge`. */
  shard?: Shard;
  /** Start over instead of resuming. */
  fresh?: boolean;
  /** Exit 2 instead of redoing predictions whose sample changed since they were made (jobs/made-from). */
  strictResume?: boolean;
  /** Told of prediction rows kept unverified (an older file that records no digest of its sample). */
  onWarning?: (message: string) => void;
  /** Recorded on every prediction row; a resumed file must have the same (see jobs/settings). */
  settings?: JobSettings;
  seed?: number;
  /**
   * How the judge is shown the earlier steps: `tags` renders them as the policy's `<chunk>`s
   * (a policy that wrote tags, as the tiny world's does). Default paragraph: `[Step i]` blocks.
   */
  segmentation?: Segmentation;
  onProgress?: (p: JobProgress) => void;
  signal?: AbortSignal;
}

/** The report of one ProcessBench run. */
export interface ProcessBenchReport extends ProcessBenchScore {
  benchmark: 'ProcessBench';
  judge: string;
  /** True when the judge is simulated: the numbers describe the simulator, not a real model. */
  simulated: boolean;
  /** Present (and loud) when `simulated`. */
  notice?: string;
  threshold: {
    mode: ThresholdMode['mode'];
    value: number | null;
    chosenOn?: string;
    f1OnChosenSubset?: number;
  };
  votes: number | null;
  samples: number;
  /** Unparsable judge replies, the replies read (parsed or not), and the share of unparsable ones. */
  formatFailures: number;
  replies: number;
  formatFailureRate: number;
  /**
   * Samples where the judge gave no usable answer (scored as misses): no parsable answer at all,
   * or no parsable verdict on a chunk before the predicted first error.
   */
  abstained: number;
  /** What the judge spent in this run (resumed lines included). */
  cost: Cost;
  /** Predictions kept from the file, redone because their sample changed, kept unchecked (older file). */
  resume?: ResumeCounts;
  predictions: string;
  createdAt: string;
}

export const SIMULATED_NOTICE =
  'SIMULATED judge: these numbers come from the stepwise simulator, not from any real model. Do not compare them with published results.';

/**
 * Whether a judge's work was the simulated world's: its cost ledger's world (every judge
 * `createJudge` builds has one: what its model is, and replies the sim server marked), else —
 * for a judge built by hand — a sim spec in its name.
 */
export function isSimulatedJudge(judge: StepJudge): boolean {
  if (worldOfJudge(judge) === 'sim') return true;
  // A judge that says its world (or simulated: false) is believed; only a silent one is named.
  if (judge.world !== undefined || judge.simulated !== undefined) return false;
  const model = judge.name.slice(judge.name.indexOf(':') + 1);
  return judge.name.startsWith('sim:') || isSimModelName(model);
}

function defaultThreshold(judge: StepJudge): ThresholdMode {
  return judge.scalar ? { mode: 'auto', subset: 'gsm8k' } : { mode: 'verdict' };
}

/** ProcessBench-format samples read as a job goes (see {@link scanProcessBenchSamples}). */
export interface ProcessBenchSamples {
  /** The samples, in {@link loadProcessBenchSamples}' order, read anew on each call. */
  read(): AsyncIterable<ProcessBenchRecord>;
  /** How many samples `read()` yields. */
  count: number;
  /** The subsets they come from. */
  subsets: readonly string[];
}

/**
 * {@link loadProcessBenchSamples} without holding the samples. Before any work, a pass over the
 * files, a record at a time, checks every record (a bad one fails naming file, line or index, and
 * field) and counts each file's classes; a second pass over the samples kept (`limit`: the same
 * spread over each class) refuses an id seen twice and shows each to `check`. `read()` reads them
 * again as the job goes, in the same order. A ProcessBench-format JSONL file of any size is then
 * judged in memory bounded by the judge's concurrency (and, during the check, the ids seen).
 */
export async function scanProcessBenchSamples(
  options: { path?: string; subsets?: readonly string[]; limit?: number } = {},
  check?: (sample: ProcessBenchRecord) => void,
): Promise<ProcessBenchSamples> {
  const isFile =
    options.path !== undefined && existsSync(options.path) && !statSync(options.path).isDirectory();
  // One source per subset file; a single file is one subset (its name).
  const sources = isFile
    ? [processBenchSource({ path: options.path })]
    : (options.subsets ?? PROCESSBENCH_SUBSETS).map((split) =>
        processBenchSource({ path: options.path, split }),
      );
  // Pass 1: every record checked, each file's classes counted.
  const files: Array<{ source: RecordSource<ProcessBenchRecord>; wrong: number; right: number }> = [];
  for (const source of sources) {
    const counts = { source, wrong: 0, right: 0 };
    for await (const r of source.read()) {
      if (isFile && options.subsets && !options.subsets.includes(r.subset)) continue;
      if (r.label === -1) counts.right++;
      else counts.wrong++;
    }
    if (counts.wrong + counts.right > 0) files.push(counts);
  }
  const limit = options.limit;
  async function* read(): AsyncGenerator<ProcessBenchRecord> {
    for (const f of files) {
      const keep = stratifiedPicker(f.wrong, f.right, limit);
      for await (const r of f.source.read()) {
        if (isFile && options.subsets && !options.subsets.includes(r.subset)) continue;
        if (keep(r.label !== -1)) yield r;
      }
    }
  }
  // Pass 2, over the samples the job will judge: ids once each, `check`, the count.
  const ids = new Set<string>();
  const subsets: string[] = [];
  let count = 0;
  for await (const r of read()) {
    if (ids.has(r.id))
      throw new StepwiseError(`ProcessBench sample id ${r.id} appears twice`, { exitCode: 2 });
    ids.add(r.id);
    check?.(r);
    count++;
    if (!subsets.includes(r.subset)) subsets.push(r.subset);
  }
  ids.clear();
  return { count, subsets, read };
}

/**
 * {@link stratifiedSample} one record at a time, given the class sizes: whether to keep the next
 * record of a file (erroneous or not) — the same records, since each class's picks ⌊i·len/n⌋ rise.
 */
function stratifiedPicker(
  wrong: number,
  right: number,
  n: number | undefined,
): (isWrong: boolean) => boolean {
  const total = wrong + right;
  if (n === undefined || n >= total) return () => true;
  let takeWrong = Math.round((n * wrong) / total);
  if (n >= 2 && wrong > 0 && right > 0) takeWrong = Math.min(Math.max(takeWrong, 1), n - 1);
  const spread = (len: number, take: number) => {
    if (take >= len) return () => true;
    let seen = 0;
    let picked = 0;
    return () => {
      const keep = picked < take && seen === Math.floor((picked * len) / take);
      seen++;
      if (keep) picked++;
      return keep;
    };
  };
  const pickWrong = spread(wrong, takeWrong);
  const pickRight = spread(right, n - takeWrong);
  return (isWrong) => (isWrong ? pickWrong() : pickRight());
}

/**
 * Run a judge over ProcessBench-format samples and score it with the official metric
 * (METHODS §4). Each sample's judgment is appended to `predictionsPath` as soon as it is done, so
 * an interrupted run resumes where it stopped; model calls are cached by the model layer. At the
 * end the file is rewritten in input order with the final `prediction` of every line.
 */
export async function runProcessBench(options: ProcessBenchRunOptions): Promise<ProcessBenchReport> {
  const { judge, samples } = options;
  const list = Array.isArray(samples) ? (samples as readonly ProcessBenchRecord[]) : undefined;
  const source = list ? undefined : (samples as ProcessBenchSamples);
  const threshold = options.threshold ?? defaultThreshold(judge);
  const subsets = source ? source.subsets : [...new Set(list!.map((s) => s.subset))];
  if (threshold.mode === 'auto' && !subsets.includes(threshold.subset)) {
    const present = subsets.join(', ');
    throw new UsageError(
      `--threshold auto picks the threshold on the ${threshold.subset} subset, which this run does not include ` +
        `(subsets: ${present || 'none'}); include it, choose another with --threshold-subset <name>, or pass --threshold <number>`,
    );
  }
  const ids = new Set<string>();
  for (const s of list ?? []) {
    if (ids.has(s.id))
      throw new StepwiseError(`ProcessBench sample id ${s.id} appears twice`, { exitCode: 2 });
    ids.add(s.id);
  }
  ids.clear();
  const earlyExit = threshold.mode === 'verdict';
  const settings = {
    votes: options.votes ?? null,
    seed: options.seed ?? null,
    ...(options.segmentation === 'tags' ? { segmentation: 'tags' } : {}),
  };
  if (!options.fresh) checkResumable(options.predictionsPath, judge.name, settings);
  // Only what the threshold choice needs is kept per sample (the chosen subset's scores);
  // the predictions themselves stay on disk.
  const forThreshold: ScoredSample[] = [];
  let incomplete: ProcessBenchPrediction | undefined;
  const result = await runStreamJob<ProcessBenchRecord, ProcessBenchPrediction>({
    items: source ? source.read() : list!,
    total: options.shard ? undefined : (source?.count ?? list!.length),
    keyOf: (s) => s.id,
    keyOfOutput: (r) => r.id,
    out: options.predictionsPath,
    fresh: options.fresh,
    strictResume: options.strictResume,
    onWarning: options.onWarning,
    unit: 'samples',
    settings: options.settings,
    shard: options.shard,
    concurrency: options.concurrency ?? 16,
    onProgress: options.onProgress,
    signal: options.signal,
    checkUniqueKeys: false,
    onRecord: (r) => {
      if (!earlyExit && !incomplete && r.scores.length !== r.steps && !r.abstained) incomplete = r;
      if (threshold.mode === 'auto' && r.subset === threshold.subset && !r.abstained)
        forThreshold.push({ label: r.label, scores: r.scores });
    },
    process: async (s) => {
      let r: Awaited<ReturnType<StepJudge['judge']>>;
      try {
        r = await judge.judge(processBenchProblem(s), s.steps, {
          firstErrorOnly: earlyExit,
          votes: options.votes,
          seed: options.seed,
          segmentation: options.segmentation,
          signal: options.signal,
        });
      } catch (e) {
        // Its request went to a batch file (--batch-out) or awaits one: a later round finishes it.
        if (e instanceof BatchPending) return undefined;
        throw e;
      }
      return {
        id: s.id,
        subset: s.subset,
        label: s.label,
        prediction: r.abstained ? null : r.firstError,
        steps: s.steps.length,
        scores: r.judgments.map((j) => j.score),
        judgeFirstError: r.firstError,
        formatFailures: r.formatFailures,
        replies: repliesOf(r),
        ...(r.abstainedAt !== undefined ? { abstainedAt: r.abstainedAt } : {}),
        ...(r.abstained ? { abstained: true } : {}),
        cost: r.cost.judge,
        judge: judge.name,
        settings,
        ...(isSimulatedJudge(judge) ? { simulated: true as const } : {}),
      };
    },
  });
  if (result.pending > 0) throw new ProcessBenchPendingError(result.pending, result.done, result.items);
  if (result.done < result.items)
    throw new StepwiseError('ProcessBench run stopped before every sample was judged');
  if (incomplete) {
    throw new StepwiseError(
      `${options.predictionsPath}: sample ${incomplete.id} has ${incomplete.scores.length} scores for ${incomplete.steps} steps ` +
        '(written by a run with early exit?): pass --fresh to start over',
      { exitCode: 2 },
    );
  }

  let chosen: ThresholdChoice | null = null;
  let t: number | null = null;
  if (threshold.mode === 'auto') {
    chosen = selectThreshold(forThreshold);
    t = chosen.threshold;
  } else if (threshold.mode === 'fixed') {
    t = threshold.value;
  }
  // The final predictions, rewritten a line at a time; the score keeps four counts a subset.
  const scored = processBenchScoreAccumulator();
  let samplesScored = 0;
  let formatFailures = 0;
  let abstained = 0;
  // Rows written before `replies` was recorded count their sampled replies instead.
  let replies = 0;
  let cost = emptyCost();
  // A judge found simulated only by a reply (a server's own marking) marks the earlier lines too.
  const simulated = isSimulatedJudge(judge);
  rewriteJsonl<ProcessBenchPrediction>(options.predictionsPath, (r) => {
    const final = {
      ...r,
      prediction: predictionAt(r, t),
      ...(simulated ? { simulated: true as const } : {}),
    };
    scored.add({ subset: final.subset, label: final.label, prediction: final.prediction });
    samplesScored++;
    formatFailures += final.formatFailures;
    replies += final.replies ?? final.cost.samples;
    if (final.prediction === null) abstained++;
    cost = addCosts(cost, { ...emptyCost(), judge: final.cost });
    return final;
  });

  const score = scored.result();
  return {
    benchmark: 'ProcessBench',
    judge: judge.name,
    simulated,
    ...(simulated ? { notice: SIMULATED_NOTICE } : {}),
    subsets: score.subsets,
    average_f1: score.average_f1,
    threshold: {
      mode: threshold.mode,
      value: t,
      ...(threshold.mode === 'auto' ? { chosenOn: threshold.subset, f1OnChosenSubset: chosen?.f1 } : {}),
    },
    votes: options.votes ?? null,
    samples: samplesScored,
    formatFailures,
    replies,
    formatFailureRate: formatFailureShare(formatFailures, replies),
    abstained,
    cost,
    resume: { resumed: result.resumed, redone: result.redone, unverified: result.unverified },
    predictions: options.predictionsPath,
    createdAt: new Date().toISOString(),
  };
}

/**
 * A sample's prediction at threshold `t` (null: the judge's own verdicts). Null — a miss — when
 * the judge gave no usable answer, or abstained on a chunk at or before the predicted first
 * error (or anywhere, when it predicts none): the first error could be the chunk it said nothing on.
 */
export function predictionAt(
  r: Pick<ProcessBenchPrediction, 'abstained' | 'abstainedAt' | 'judgeFirstError' | 'scores'>,
  t: number | null,
): number | null {
  if (t === null) return r.abstained ? null : r.judgeFirstError;
  const predicted = firstBelow(r.scores, t);
  if (r.abstainedAt !== undefined && (predicted < 0 || r.abstainedAt <= predicted)) return null;
  return predicted;
}

/** Thrown when some samples' judge requests wait in a batch file: the run is not finished. */
export class ProcessBenchPendingError extends StepwiseError {
  constructor(
    readonly pending: number,
    readonly done: number,
    readonly items: number,
  ) {
    super(`${pending} of ${items} samples wait for batch answers (${done} judged)`, { exitCode: 1 });
    this.name = 'ProcessBenchPendingError';
  }
}

/** Refuse to resume a predictions file written by another judge or with other settings. */
function checkResumable(path: string, judge: string, settings: ProcessBenchPrediction['settings']): void {
  if (!existsSync(path)) return;
  // One line at a time: the file is read, never held.
  for (const l of readLinesSync(path)) {
    const line = l.text;
    if (line.trim() === '') continue;
    let row: Partial<ProcessBenchPrediction>;
    try {
      row = JSON.parse(line);
    } catch {
      continue; // a torn last line: the job cuts it
    }
    const same =
      row.judge === judge && row.settings?.votes === settings.votes && row.settings?.seed === settings.seed;
    if (!same) {
      throw new StepwiseError(
        `${path} holds predictions of another run (judge "${row.judge}", settings ${JSON.stringify(row.settings)}); ` +
          `this run is judge "${judge}", settings ${JSON.stringify(settings)}: pass --fresh to start over or write to another --out`,
        { exitCode: 2 },
      );
    }
  }
}

/** Rewrite a JSONL file line by line through `map`, atomically (a temporary file renamed over it). */
function rewriteJsonl<T>(path: string, map: (row: T) => T): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    let pending: string[] = [];
    let bytes = 0;
    for (const l of readLinesSync(path)) {
      if (l.text.trim() === '') continue;
      const line = `${JSON.stringify(map(JSON.parse(l.text) as T))}\n`;
      pending.push(line);
      bytes += line.length;
      if (bytes >= 1 << 20) {
        writeSync(fd, pending.join(''));
        pending = [];
        bytes = 0;
      }
    }
    writeSync(fd, pending.join(''));
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Score a predictions file (`{id, prediction}` per line, JSONL) against the labels of a
 * ProcessBench-format data set — for judges run elsewhere. Every line must name a known id once;
 * `prediction` is an integer ≥ −1 (or null: no answer, a miss). Only the subsets the file covers
 * are scored; `n` is the number of its lines in each.
 */
export function scorePredictions(
  file: string,
  dataset: readonly ProcessBenchRecord[],
): ProcessBenchScore & { missing: Record<string, number>; abstained: number } {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  const byId = new Map(dataset.map((r) => [r.id, r]));
  const seen = new Set<string>();
  const rows: Array<{ subset: string; label: number; prediction: number | null }> = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].trim();
    if (text === '') continue;
    const where = { file, line: i + 1 };
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (e) {
      if (rows.length === 0 && text.startsWith('[')) throw jsonArrayError(file);
      throw new InputError(where, `not valid JSON (${(e as Error).message})`);
    }
    if (rows.length === 0 && Array.isArray(row)) throw jsonArrayError(file);
    const wrong = wrongKindError(where, row, ['predictions'], 'eval processbench --predictions', {
      strict: false,
    });
    if (wrong) throw wrong;
    if (row === null || typeof row !== 'object' || Array.isArray(row))
      throw new InputError(where, 'expected an object {id, prediction}');
    const { id, prediction } = parseRecord(PredictionRowSchema, where, row);
    const sample = byId.get(id);
    if (!sample)
      throw new InputError(
        { ...where, field: 'id' },
        `unknown ProcessBench id "${id}" (not in the data set read)`,
      );
    if (seen.has(id)) throw new InputError({ ...where, field: 'id' }, `id "${id}" appears twice`);
    seen.add(id);
    rows.push({ subset: sample.subset, label: sample.label, prediction });
  }
  if (rows.length === 0)
    throw new InputError({ file }, 'no predictions in the file (expected {id, prediction} lines)');
  const score = processBenchScore(rows);
  const missing: Record<string, number> = {};
  for (const name of Object.keys(score.subsets)) {
    const total = dataset.filter((r) => r.subset === name).length;
    const have = rows.filter((r) => r.subset === name).length;
    if (have < total) missing[name] = total - have;
  }
  return { ...score, missing, abstained: rows.filter((r) => r.prediction === null).length };
}

/** The exact JSON of `--predictions --json`: `{subsets: {name: {error_acc, correct_acc, f1, n}}, average_f1}`. */
export function scoreJson(score: ProcessBenchScore): ProcessBenchScore {
  const subsets: Record<string, SubsetMetrics> = {};
  for (const [k, m] of Object.entries(score.subsets))
    subsets[k] = { error_acc: m.error_acc, correct_acc: m.correct_acc, f1: m.f1, n: m.n };
  return { subsets, average_f1: score.average_f1 };
}
