import { isPositiveLabel, softThresholdOf } from '../label/signals.js';
import type { FileKind } from './files.js';

/**
 * Whole-file summaries the web view shows above a file's pages (the pages themselves show 20
 * records at a time), and the rule that says whether a file or run is simulated.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A model or judge spec that names the simulated world: `sim`, `sim?…`, `sim:generative`, `critic:sim`, `generative:sim?…`. */
export function isSimSpec(spec: unknown): boolean {
  return typeof spec === 'string' && /(^|:)sim($|[?:[])/.test(spec);
}

/** Ids the simulated world gives its problems (`sim/<seed>/<i>`) and ProcessBench-format rows (`sim-pb/<seed>/<i>`). */
export function isSimId(id: unknown): boolean {
  return typeof id === 'string' && /^sim(-pb)?\/\d+\/\d+/.test(id);
}

/** Whether a run's recorded config says it ran on the simulated world. */
export function isSimulatedConfig(config: unknown): boolean {
  if (!isObj(config)) return false;
  if (config.simulated === true || config.dataset === 'sim') return true;
  return ['policy', 'judge', 'outcome', 'model'].some((k) => isSimSpec(config[k]));
}

/** Whether one record or report of a file says it is simulated (its own flag, its judge/policy spec, or sim-world ids). */
export function isSimulatedRecord(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && isSimulatedRecord(value[0]);
  if (!isObj(value)) return false;
  // A demo report names its world: the tiny real networks (simulated: false) are not the simulator.
  if (value.kind === 'stepwise-demo') return value.simulated !== false;
  if (value.simulated === true) return true;
  if (isSimSpec(value.judge) || isSimSpec(value.policy)) return true;
  if (typeof value.generator === 'string' && /simulated/.test(value.generator)) return true;
  return isSimId(value.id);
}

const tokens = (c: unknown): number => (isObj(c) ? num(c.promptTokens) + num(c.completionTokens) : 0);

/** Summary of a `stepwise search` output. */
export interface SearchFileSummary {
  kind: 'search';
  problems: number;
  strategies: string[];
  checked: number;
  correct: number;
  accuracy: number | null;
  /** Mean policy and judge tokens and calls per problem. */
  perProblem: { policyTokens: number; judgeTokens: number; policyCalls: number; judgeCalls: number };
  attempts: number;
  rejected: number;
  backtracks: number;
  /** Record indices (0-based) of problems whose search backtracked / rejected an attempt (first 50). */
  withBacktracks: number[];
  withRejections: number[];
}

/** Summary of a `stepwise label` output. */
export interface LabelFileSummary {
  kind: 'labels';
  solutions: number;
  chunks: number;
  signals: string[];
  /** Share of labelled chunks that are positive, per signal (soft labels at the file's soft threshold). */
  positiveShare: Record<string, number>;
  /** Solutions with a first error, per signal. */
  withFirstError: Record<string, number>;
  finalAnswerCorrect: number;
  rollouts: number;
}

/** Summary of a `stepwise sample` output. */
export interface SampleFileSummary {
  kind: 'samples';
  problems: number;
  samples: number;
  correct: number;
  /** Problems with at least one correct sample. */
  solved: number;
}

/** Summary of a ProcessBench predictions file: every (true, predicted) first-error pair, for the chart. */
export interface PredictionFileSummary {
  kind: 'predictions';
  samples: number;
  judge: string | null;
  subsets: Record<string, { n: number; exact: number }>;
  exact: number;
  /**
   * (true first error, predicted first error or null, samples) for every pair that occurs: the
   * chart's cells, a few hundred numbers whatever the file's size.
   */
  cells: Array<[number, number | null, number]>;
}

/** Summary of `eval chunks` per-chunk rows: agreement counts and where the judge disagreed. */
export interface ChunkJudgmentFileSummary {
  kind: 'chunk-judgments';
  chunks: number;
  /** Solutions, counted as runs of consecutive rows of one solution (how `eval chunks` writes them). */
  solutions: number;
  agree: number;
  disagree: number;
  /** Labelled chunks the judge abstained on or did not rule on. */
  abstained: number;
  /** Chunks without a label under the signal (not compared). */
  unlabelled: number;
  /** Judge positive where the label is negative, and the reverse. */
  falsePositive: number;
  falseNegative: number;
  /** Record indices (0-based) of the first disagreements (at most 50). */
  disagreements: number[];
}

/** Summary of a `stepwise select` output. */
export interface SelectionFileSummary {
  kind: 'selection';
  problems: number;
  /** Problems where the judge picked a response (those with a correct one). */
  picked: number;
  /** Problems where the judge's pick is not the outcome-only pick. */
  differ: number;
  /** Correct responses judged, over every problem. */
  candidates: number;
  judgeCalls: number;
  judgeTokens: number;
}

export type FileSummary =
  | SearchFileSummary
  | LabelFileSummary
  | SampleFileSummary
  | PredictionFileSummary
  | ChunkJudgmentFileSummary
  | SelectionFileSummary;

/** A whole-file summary built one record at a time (the index reads a file once, whatever its size). */
export interface SummaryAccumulator<S extends FileSummary = FileSummary> {
  /** The next record of the file (its 0-based index among the file's records). */
  add(record: unknown, index: number): void;
  result(): S | null;
}

/** Summarize the records of a JSONL file of a known kind; null for kinds without a summary. */
export function summarizeRecords(kind: FileKind, records: readonly unknown[]): FileSummary | null {
  const acc = summaryAccumulator(kind);
  records.forEach((r, i) => {
    acc.add(r, i);
  });
  return acc.result();
}

/** `stepwise search` output: accuracy, cost per problem, attempts, rejections and backtracks. */
function searchSummary(): SummaryAccumulator<SearchFileSummary> {
  let problems = 0;
  let checked = 0;
  let correct = 0;
  let attempts = 0;
  let rejected = 0;
  let backtracks = 0;
  const sums = { policyTokens: 0, judgeTokens: 0, policyCalls: 0, judgeCalls: 0 };
  const withBacktracks: number[] = [];
  const withRejections: number[] = [];
  const strategies = new Set<string>();
  return {
    add(r, i) {
      if (!isObj(r)) return;
      problems++;
      if (typeof r.strategy === 'string' && strategies.size < 20) strategies.add(r.strategy);
      if (typeof r.correct === 'boolean') {
        checked++;
        if (r.correct) correct++;
      }
      const cost = isObj(r.cost) ? r.cost : {};
      sums.policyTokens += tokens(cost.policy);
      sums.judgeTokens += tokens(cost.judge);
      sums.policyCalls += isObj(cost.policy) ? num(cost.policy.calls) : 0;
      sums.judgeCalls += isObj(cost.judge) ? num(cost.judge.calls) : 0;
      const trace = Array.isArray(r.trace) ? r.trace.filter(isObj) : [];
      attempts += trace.length;
      const rej = trace.filter((n) => n.status === 'rejected').length;
      rejected += rej;
      const bt = Array.isArray(r.backtracks) ? r.backtracks.length : 0;
      backtracks += bt;
      if (bt > 0 && withBacktracks.length < 50) withBacktracks.push(i);
      if (rej > 0 && withRejections.length < 50) withRejections.push(i);
    },
    result() {
      const n = Math.max(1, problems);
      return {
        kind: 'search',
        problems,
        strategies: [...strategies],
        checked,
        correct,
        accuracy: checked ? correct / checked : null,
        perProblem: {
          policyTokens: sums.policyTokens / n,
          judgeTokens: sums.judgeTokens / n,
          policyCalls: sums.policyCalls / n,
          judgeCalls: sums.judgeCalls / n,
        },
        attempts,
        rejected,
        backtracks,
        withBacktracks,
        withRejections,
      };
    },
  };
}

/** `stepwise label` output: chunks, signals, the share of positive labels and first errors per signal. */
function labelSummary(): SummaryAccumulator<LabelFileSummary> {
  const pos: Record<string, number> = {};
  const labelled: Record<string, number> = {};
  const withFirstError: Record<string, number> = {};
  let solutions = 0;
  let chunks = 0;
  let finalAnswerCorrect = 0;
  let rollouts = 0;
  return {
    add(r) {
      if (!isObj(r)) return;
      solutions++;
      if (r.finalAnswerCorrect === true) finalAnswerCorrect++;
      if (isObj(r.cost)) rollouts += num(r.cost.rollouts);
      for (const [s, fe] of Object.entries(isObj(r.firstError) ? r.firstError : {})) {
        if (!Object.hasOwn(withFirstError, s) && Object.keys(withFirstError).length >= 32) continue;
        withFirstError[s] ??= 0;
        if (typeof fe === 'number' && fe >= 0) withFirstError[s]++;
      }
      const softThreshold = softThresholdOf(r);
      for (const c of Array.isArray(r.chunks) ? r.chunks.filter(isObj) : []) {
        chunks++;
        for (const [s, v] of Object.entries(isObj(c.labels) ? c.labels : {})) {
          if (v === null || v === undefined) continue;
          if (!Object.hasOwn(labelled, s) && Object.keys(labelled).length >= 32) continue;
          labelled[s] = (labelled[s] ?? 0) + 1;
          const positive = typeof v === 'number' ? isPositiveLabel(v, softThreshold) : v === true;
          pos[s] = (pos[s] ?? 0) + (positive ? 1 : 0);
        }
      }
    },
    result() {
      const signals = [...new Set([...Object.keys(withFirstError), ...Object.keys(labelled)])];
      return {
        kind: 'labels',
        solutions,
        chunks,
        signals,
        positiveShare: Object.fromEntries(
          signals.map((s) => [s, labelled[s] ? (pos[s] ?? 0) / labelled[s] : 0]),
        ),
        withFirstError: { ...withFirstError },
        finalAnswerCorrect,
        rollouts,
      };
    },
  };
}

/** `stepwise sample` output: samples, correct ones, problems solved. */
function sampleSummary(): SummaryAccumulator<SampleFileSummary> {
  let problems = 0;
  let samples = 0;
  let correct = 0;
  let solved = 0;
  return {
    add(r) {
      if (!isObj(r)) return;
      problems++;
      const list = Array.isArray(r.samples) ? r.samples.filter(isObj) : [];
      samples += list.length;
      const right = list.filter((s) => s.correct === true).length;
      correct += right;
      if (right > 0) solved++;
    },
    result: () => ({ kind: 'samples', problems, samples, correct, solved }),
  };
}

/** ProcessBench predictions: exact first errors per subset and the (true, predicted) cells of the chart. */
function predictionSummary(): SummaryAccumulator<PredictionFileSummary> {
  const subsets: Record<string, { n: number; exact: number }> = {};
  const cells = new Map<string, [number, number | null, number]>();
  let samples = 0;
  let exact = 0;
  let judge: string | null = null;
  return {
    add(r) {
      if (!isObj(r) || typeof r.label !== 'number') return;
      samples++;
      judge ??= typeof r.judge === 'string' ? r.judge : null;
      const p = typeof r.prediction === 'number' ? r.prediction : null;
      const key = `${r.label},${p}`;
      const cell = cells.get(key);
      if (cell) cell[2]++;
      else if (cells.size < 10_000) cells.set(key, [r.label, p, 1]);
      const s = typeof r.subset === 'string' ? r.subset : '?';
      if (!Object.hasOwn(subsets, s) && Object.keys(subsets).length >= 64) return;
      subsets[s] ??= { n: 0, exact: 0 };
      subsets[s].n++;
      if (p === r.label) {
        subsets[s].exact++;
        exact++;
      }
    },
    result: () => ({
      kind: 'predictions',
      samples,
      judge,
      subsets: structuredClone(subsets),
      exact,
      cells: [...cells.values()].map((c): [number, number | null, number] => [c[0], c[1], c[2]]),
    }),
  };
}

/** `eval chunks` per-chunk rows: agreement with the labels and where the judge disagreed. */
function chunkJudgmentSummary(): SummaryAccumulator<ChunkJudgmentFileSummary> {
  const out: ChunkJudgmentFileSummary = {
    kind: 'chunk-judgments',
    chunks: 0,
    solutions: 0,
    agree: 0,
    disagree: 0,
    abstained: 0,
    unlabelled: 0,
    falsePositive: 0,
    falseNegative: 0,
    disagreements: [],
  };
  let lastSolution: unknown;
  return {
    add(r, i) {
      if (!isObj(r)) return;
      out.chunks++;
      if (out.chunks === 1 || r.solution !== lastSolution) out.solutions++;
      lastSolution = r.solution;
      if (typeof r.label !== 'boolean') out.unlabelled++;
      else if (r.agrees === true) out.agree++;
      else if (r.agrees === false) {
        out.disagree++;
        if (r.label) out.falseNegative++;
        else out.falsePositive++;
        if (out.disagreements.length < 50) out.disagreements.push(i);
      } else out.abstained++;
    },
    result: () => ({ ...out, disagreements: [...out.disagreements] }),
  };
}

/** `stepwise select` output: picks, where they differ from outcome-only, and the judge's cost. */
function selectionSummary(): SummaryAccumulator<SelectionFileSummary> {
  const out: SelectionFileSummary = {
    kind: 'selection',
    problems: 0,
    picked: 0,
    differ: 0,
    candidates: 0,
    judgeCalls: 0,
    judgeTokens: 0,
  };
  return {
    add(r) {
      if (!isObj(r)) return;
      out.problems++;
      const chosen = isObj(r.chosen) ? r.chosen : null;
      const outcome = isObj(r.outcomeOnly) ? r.outcomeOnly : null;
      if (chosen) out.picked++;
      if (chosen && outcome && chosen.index !== outcome.index) out.differ++;
      if (Array.isArray(r.candidates)) out.candidates += r.candidates.length;
      const judge = isObj(r.cost) && isObj(r.cost.judge) ? r.cost.judge : null;
      out.judgeCalls += judge ? num(judge.calls) : 0;
      out.judgeTokens += tokens(judge);
    },
    result: () => ({ ...out }),
  };
}

/**
 * The summarizer of each record kind the web view summarizes, keyed by kind: a kind gets a summary
 * by a function here and a line in this table, nothing else.
 */
const SUMMARIZERS: Partial<Record<FileKind, () => SummaryAccumulator>> = {
  search: searchSummary,
  labels: labelSummary,
  samples: sampleSummary,
  predictions: predictionSummary,
  'chunk-judgments': chunkJudgmentSummary,
  selection: selectionSummary,
};

/** The kinds that have a whole-file summary, in {@link SUMMARIZERS} order: GET /api/legend serves them to the view. */
export const SUMMARY_KINDS = Object.keys(SUMMARIZERS) as FileSummary['kind'][];

/**
 * {@link summarizeRecords} one record at a time: counts, sums and capped lists of indices, never
 * the records, so a file of any size is summarized in bounded memory. Kinds without a summarizer
 * summarize to null.
 */
export function summaryAccumulator(kind: FileKind): SummaryAccumulator {
  return SUMMARIZERS[kind]?.() ?? { add() {}, result: () => null };
}
