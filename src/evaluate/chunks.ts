import pLimit from 'p-limit';
import { addCosts, emptyCost } from '../core/cost.js';
import { InputError, UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import type { Cost, Problem } from '../core/types.js';
import { readJsonl } from '../jobs/jsonl.js';
import type { JobProgress } from '../jobs/run-job.js';
import type { StepJudge } from '../judge/types.js';
import { DEFAULT_SIGNAL_PARAMS, isPositiveLabel, LABEL_SIGNALS, type LabelSignal } from '../label/signals.js';
import { type ChunkAgreement, chunkAgreement } from './metrics.js';
import { isSimulatedJudge, SIMULATED_NOTICE } from './processbench.js';

/** One solution of a label file (`stepwise label` output), reduced to what chunk evaluation needs. */
export interface ChunkEvalSolution {
  id: string;
  problem: Problem;
  chunks: string[];
  /** The chunk labels under the chosen signal; null = undetermined (not compared). */
  labels: Array<boolean | null>;
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
 * are positive at ≥ 0.5. Throws an InputError naming line and field.
 */
export function readLabeledSolutions(file: string, signal: LabelSignal): ChunkEvalSolution[] {
  if (!(LABEL_SIGNALS as readonly string[]).includes(signal))
    throw new UsageError(`unknown signal "${signal}" (one of ${LABEL_SIGNALS.join(', ')})`);
  const { lines } = readJsonl(file);
  const out: ChunkEvalSolution[] = [];
  for (const { line, value } of lines) {
    const err = (field: string, what: string) => new InputError({ file, line, field }, what);
    if (!isObj(value)) throw new InputError({ file, line }, 'expected a JSON object');
    const id = value.id;
    if (typeof id !== 'string' || id === '') throw err('id', 'missing id (a string)');
    const question = typeof value.problem === 'string' ? value.problem : value.question;
    if (typeof question !== 'string') throw err('problem', 'missing problem text');
    const answer = value.answer === undefined || value.answer === null ? '' : String(value.answer);
    if (!Array.isArray(value.chunks)) throw err('chunks', 'expected an array of {text, labels}');
    const chunks: string[] = [];
    const labels: Array<boolean | null> = [];
    value.chunks.forEach((c, i) => {
      if (!isObj(c) || typeof c.text !== 'string') throw err(`chunks[${i}].text`, 'missing chunk text');
      chunks.push(c.text);
      const l = isObj(c.labels) ? c.labels[signal] : undefined;
      if (l === undefined)
        throw err(
          `chunks[${i}].labels.${signal}`,
          `no "${signal}" label (was the file labelled with --signals ${signal}?)`,
        );
      if (l !== null && typeof l !== 'boolean' && typeof l !== 'number')
        throw err(`chunks[${i}].labels.${signal}`, 'expected a boolean, a number or null');
      labels.push(l === null ? null : isPositiveLabel(l, DEFAULT_SIGNAL_PARAMS.softThreshold));
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
      firstError: typeof fe === 'number' ? fe : null,
    });
  }
  return out;
}

/** The result of `eval chunks`. */
export interface ChunkEvalReport extends ChunkAgreement {
  judge: string;
  signal: LabelSignal;
  simulated: boolean;
  notice?: string;
  solutions: number;
  /** Share of solutions whose predicted first error equals the labelled one (solutions with one). */
  first_error_accuracy: number | null;
  formatFailures: number;
  cost: Cost;
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
}): Promise<ChunkEvalReport> {
  const { judge, solutions } = options;
  const limit = pLimit(Math.max(1, options.concurrency ?? 16));
  const pairs: Array<{ label: boolean; predicted: boolean | null }> = [];
  let done = 0;
  let feHits = 0;
  let feN = 0;
  let formatFailures = 0;
  const costs: Cost[] = [];
  options.onProgress?.({ done: 0, total: solutions.length, resumed: 0 });
  await Promise.all(
    solutions.map((s) =>
      limit(async () => {
        const r = await judge.judge(s.problem, s.chunks, {
          votes: options.votes,
          signal: options.signalAbort,
          segmentation: options.segmentation ?? s.segmentation ?? 'paragraph',
        });
        const byIndex = new Map(r.judgments.map((j) => [j.chunkIndex, j]));
        s.labels.forEach((label, i) => {
          if (label === null) return;
          const j = byIndex.get(i);
          if (!j) return; // the judge did not rule on this chunk (e.g. an outcome model)
          pairs.push({ label, predicted: j.verdict === 'neutral' ? null : j.verdict === 'positive' });
        });
        if (s.firstError !== null && !r.abstained) {
          feN++;
          if (r.firstError === s.firstError) feHits++;
        }
        formatFailures += r.formatFailures;
        costs.push(r.cost);
        done++;
        options.onProgress?.({ done, total: solutions.length, resumed: 0 });
      }),
    ),
  );
  const simulated = isSimulatedJudge(judge);
  return {
    judge: judge.name,
    signal: options.signal,
    simulated,
    ...(simulated ? { notice: SIMULATED_NOTICE } : {}),
    solutions: solutions.length,
    ...chunkAgreement(pairs),
    first_error_accuracy: feN === 0 ? null : feHits / feN,
    formatFailures,
    cost: costs.length === 0 ? emptyCost() : addCosts(...costs),
  };
}
