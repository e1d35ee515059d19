import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import pLimit from 'p-limit';
import type { z } from 'zod';
import { addCosts, emptyCost } from '../core/cost.js';
import { InputError, UsageError } from '../core/errors.js';
import { wrongKindError } from '../core/file-kind.js';
import type { Segmentation } from '../core/segment.js';
import type { Cost, Problem } from '../core/types.js';
import type { ChunkJudgmentRowSchema } from '../data/record-kinds.js';
import { readJsonl } from '../jobs/jsonl.js';
import type { JobProgress } from '../jobs/run-job.js';
import { formatFailureShare, repliesOf } from '../judge/common.js';
import type { StepJudge } from '../judge/types.js';
import { isPositiveLabel, LABEL_SIGNALS, type LabelSignal, softThresholdOf } from '../label/signals.js';
import { type ChunkAgreement, chunkAgreement } from './metrics.js';
import { isSimulatedJudge, SIMULATED_NOTICE } from './processbench.js';

/** One solution of a label file (`stepwise label` output), reduced to what chunk evaluation needs. */
export interface ChunkEvalSolution {
  id: string;
  problem: Problem;
  chunks: string[];
  /** The chunk labels under the chosen signal; null = undetermined (not compared). */
  labels: Array<boolean | null>;
  /** Each chunk's rollout value Q̂ (share of rollouts from its prefix that reached the gold answer); null = not estimated. */
  q?: Array<number | null>;
  /** The first error under the signal, when the file gives it. */
  firstError: number | null;
  /** How the labelled solution was segmented (`segmentation` of the label record; absent: paragraph). */
  segmentation?: Segmentation;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read a `stepwise label` output file: one line per solution `{id, problem, answer, chunks: [{text,
 * q, labels: {signal: bool | number | null}}], firstError: {signal: n}}`. Soft (`ms-soft`) labels
 * are positive at or above the soft threshold the file was labelled with (0.5 when it does not
 * say). Throws an InputError naming line and field.
 */
export function readLabeledSolutions(file: string, signal: LabelSignal): ChunkEvalSolution[] {
  if (!(LABEL_SIGNALS as readonly string[]).includes(signal))
    throw new UsageError(`unknown signal "${signal}" (one of ${LABEL_SIGNALS.join(', ')})`);
  const { lines } = readJsonl(file);
  const out: ChunkEvalSolution[] = [];
  for (const { line, value } of lines) {
    const err = (field: string, what: string) => new InputError({ file, line, field }, what);
    const wrong = wrongKindError({ file, line }, value, ['label'], 'eval chunks', { strict: false });
    if (wrong) throw wrong;
    if (!isObj(value)) throw new InputError({ file, line }, 'expected a JSON object');
    const id = value.id;
    if (typeof id !== 'string' || id === '') throw err('id', 'missing id (a string)');
    const question = typeof value.problem === 'string' ? value.problem : value.question;
    if (typeof question !== 'string') throw err('problem', 'missing problem text');
    const answer = value.answer === undefined || value.answer === null ? '' : String(value.answer);
    if (!Array.isArray(value.chunks)) throw err('chunks', 'expected an array of {text, labels}');
    const chunks: string[] = [];
    const labels: Array<boolean | null> = [];
    const q: Array<number | null> = [];
    const softThreshold = softThresholdOf(value);
    value.chunks.forEach((c, i) => {
      if (!isObj(c) || typeof c.text !== 'string') throw err(`chunks[${i}].text`, 'missing chunk text');
      chunks.push(c.text);
      q.push(typeof c.q === 'number' && Number.isFinite(c.q) ? c.q : null);
      const l = isObj(c.labels) ? c.labels[signal] : undefined;
      if (l === undefined)
        throw err(
          `chunks[${i}].labels.${signal}`,
          `no "${signal}" label (was the file labelled with --signals ${signal}?)`,
        );
      if (l !== null && typeof l !== 'boolean' && typeof l !== 'number')
        throw err(`chunks[${i}].labels.${signal}`, 'expected a boolean, a number or null');
      labels.push(l === null ? null : isPositiveLabel(l, softThreshold));
    });
    const fe = isObj(value.firstError) ? value.firstError[signal] : undefined;
    const seg = value.segmentation;
    if (seg !== undefined && seg !== 'paragraph' && seg !== 'tags')
      throw err('segmentation', 'expected "paragraph" or "tags"');
    out.push({
      ...(seg !== undefined ? { segmentation: seg } : {}),
      id,
      problem: { id, question, answer, domain: 'math', source: 'labels' },
      chunks,
      labels,
      q,
      firstError: typeof fe === 'number' ? fe : null,
    });
  }
  return out;
}

/** One chunk as `eval chunks` saw it (a line of its per-chunk file; its schema is in src/data/record-kinds.ts). */
export type ChunkJudgmentRow = z.infer<typeof ChunkJudgmentRowSchema>;

/** Chunks whose judge score fell in [lo, hi) ([lo, 1] for the last bin), and their mean Q̂. */
export interface CalibrationBin {
  lo: number;
  hi: number;
  n: number;
  meanScore: number | null;
  meanQ: number | null;
  /** Share of the bin's chunks labelled positive under the signal (chunks with a label). */
  positiveShare: number | null;
}

/** Judge score against the rollout value Q̂: a calibrated judge's bins lie on the diagonal. */
export interface Calibration {
  bins: CalibrationBin[];
  /** Chunks with both a judge score and a Q̂. */
  n: number;
  /** Σ n_b · |meanScore_b − meanQ_b| / n: how far the judge's scores are from Q̂ on average (0 = on the diagonal). */
  gap: number | null;
}

const CALIBRATION_BINS = 10;

/** Bin chunk rows by judge score (ten bins of width 0.1) with their mean Q̂ and counts. */
export function calibrationOf(rows: readonly ChunkJudgmentRow[], bins = CALIBRATION_BINS): Calibration {
  const acc = Array.from({ length: bins }, () => ({ n: 0, score: 0, q: 0, labelled: 0, positive: 0 }));
  let n = 0;
  for (const r of rows) {
    if (r.score === null || r.q === null) continue;
    const b = acc[Math.min(bins - 1, Math.max(0, Math.floor(r.score * bins)))];
    b.n++;
    b.score += r.score;
    b.q += r.q;
    if (r.label !== null) {
      b.labelled++;
      if (r.label) b.positive++;
    }
    n++;
  }
  let gap = 0;
  const out = acc.map((b, i) => {
    const meanScore = b.n ? b.score / b.n : null;
    const meanQ = b.n ? b.q / b.n : null;
    if (meanScore !== null && meanQ !== null) gap += b.n * Math.abs(meanScore - meanQ);
    return {
      lo: i / bins,
      hi: (i + 1) / bins,
      n: b.n,
      meanScore,
      meanQ,
      positiveShare: b.labelled ? b.positive / b.labelled : null,
    };
  });
  return { bins: out, n, gap: n ? gap / n : null };
}

/** Where `eval chunks --out report.json` writes its per-chunk rows: `report.chunks.jsonl`. */
export function chunkRowsPath(reportPath: string): string {
  return `${reportPath.replace(/\.json$/, '')}.chunks.jsonl`;
}

/** The result of `eval chunks`. */
export interface ChunkEvalReport extends ChunkAgreement {
  judge: string;
  signal: LabelSignal;
  simulated: boolean;
  notice?: string;
  solutions: number;
  /**
   * Share of solutions whose predicted first error equals the labelled one, over the solutions
   * with a labelled first error; a solution the judge abstained on counts as a miss.
   */
  first_error_accuracy: number | null;
  /** Solutions whose first error the judge left open (no parsable verdict before its first negative). */
  abstainedSolutions: number;
  /** Judge replies with no parsable verdict, the replies read, and the share of unparsable ones. */
  formatFailures: number;
  replies: number;
  formatFailureRate: number;
  cost: Cost;
  /** Judge score vs Q̂ over the chunks that have both. */
  calibration: Calibration;
  /** File name (beside the report) of the per-chunk rows, when they were written. */
  chunkRows?: string;
}

/**
 * Judge every chunk of labelled solutions (no early exit) and compare the verdicts with the rollout
 * labels: accuracy, balanced accuracy, per-class recall; neutral verdicts (e.g. all votes
 * unparsable) are counted as abstentions, undetermined labels are skipped.
 */
export async function evaluateChunks(options: {
  judge: StepJudge;
  solutions: readonly ChunkEvalSolution[];
  signal: LabelSignal;
  votes?: number;
  concurrency?: number;
  /**
   * How the judge is shown earlier chunks (tags: as the policy's `<chunk>`s). Default: each
   * solution's own segmentation from the label file, else paragraph.
   */
  segmentation?: Segmentation;
  onProgress?: (p: JobProgress) => void;
  signalAbort?: AbortSignal;
  /** Write one {@link ChunkJudgmentRow} per chunk here (JSONL); the report names the file. */
  rowsPath?: string;
}): Promise<ChunkEvalReport> {
  const { judge, solutions } = options;
  const limit = pLimit(Math.max(1, options.concurrency ?? 16));
  const pairs: Array<{ label: boolean; predicted: boolean | null }> = [];
  let done = 0;
  let feHits = 0;
  let feN = 0;
  let formatFailures = 0;
  let replies = 0;
  let abstainedSolutions = 0;
  const costs: Cost[] = [];
  /** Per-chunk rows by solution (solutions finish out of order; rows are written in input order). */
  const rowsOf: ChunkJudgmentRow[][] = solutions.map(() => []);
  options.onProgress?.({ done: 0, total: solutions.length, resumed: 0 });
  await Promise.all(
    solutions.map((s, at) =>
      limit(async () => {
        const r = await judge.judge(s.problem, s.chunks, {
          votes: options.votes,
          signal: options.signalAbort,
          segmentation: options.segmentation ?? s.segmentation ?? 'paragraph',
        });
        const byIndex = new Map(r.judgments.map((j) => [j.chunkIndex, j]));
        s.chunks.forEach((text, i) => {
          const label = s.labels[i] ?? null;
          const j = byIndex.get(i);
          const predicted = !j || j.verdict === 'neutral' ? null : j.verdict === 'positive';
          rowsOf[at].push({
            solution: s.id,
            chunk: i,
            text,
            label,
            q: s.q?.[i] ?? null,
            verdict: j?.verdict ?? null,
            score: j && Number.isFinite(j.score) ? j.score : null,
            agrees: label === null || predicted === null ? null : label === predicted,
            ...(j?.rationale ? { rationale: j.rationale } : {}),
          });
          if (label === null) return;
          if (!j) return; // the judge did not rule on this chunk (e.g. an outcome model)
          pairs.push({ label, predicted });
        });
        // An abstention is a miss, as in ProcessBench: the judge did not say where the error is.
        if (r.abstained) abstainedSolutions++;
        if (s.firstError !== null) {
          feN++;
          if (!r.abstained && r.firstError === s.firstError) feHits++;
        }
        formatFailures += r.formatFailures;
        replies += repliesOf(r);
        costs.push(r.cost);
        done++;
        options.onProgress?.({ done, total: solutions.length, resumed: 0 });
      }),
    ),
  );
  // Asked after judging: a judge reached by any name is simulated once its replies said so.
  const simulated = isSimulatedJudge(judge);
  const rows = rowsOf.flat().map((row) => (simulated ? { ...row, simulated: true as const } : row));
  if (options.rowsPath) {
    mkdirSync(dirname(resolve(options.rowsPath)), { recursive: true });
    writeFileSync(options.rowsPath, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  }
  return {
    judge: judge.name,
    signal: options.signal,
    simulated,
    ...(simulated ? { notice: SIMULATED_NOTICE } : {}),
    solutions: solutions.length,
    ...chunkAgreement(pairs),
    first_error_accuracy: feN === 0 ? null : feHits / feN,
    abstainedSolutions,
    formatFailures,
    replies,
    formatFailureRate: formatFailureShare(formatFailures, replies),
    cost: costs.length === 0 ? emptyCost() : addCosts(...costs),
    calibration: calibrationOf(rows),
    ...(options.rowsPath ? { chunkRows: basename(options.rowsPath) } : {}),
  };
}
