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
  /** [true first error, predicted first error or null] per sample, in file order. */
  pairs: Array<[number, number | null]>;
}

/** Summary of `eval chunks` per-chunk rows: agreement counts and where the judge disagreed. */
export interface ChunkJudgmentFileSummary {
  kind: 'chunk-judgments';
  chunks: number;
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

/** Summarize the records of a JSONL file of a known kind; null for kinds without a summary. */
export function summarizeRecords(kind: FileKind, records: readonly unknown[]): FileSummary | null {
  const recs = records.filter(isObj);
  if (kind === 'search') {
    let checked = 0;
    let correct = 0;
    let attempts = 0;
    let rejected = 0;
    let backtracks = 0;
    const sums = { policyTokens: 0, judgeTokens: 0, policyCalls: 0, judgeCalls: 0 };
    const withBacktracks: number[] = [];
    const withRejections: number[] = [];
    const strategies = new Set<string>();
    recs.forEach((r, i) => {
      if (typeof r.strategy === 'string') strategies.add(r.strategy);
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
    });
    const n = Math.max(1, recs.length);
    return {
      kind,
      problems: recs.length,
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
  }
  if (kind === 'labels') {
    const pos: Record<string, number> = {};
    const labelled: Record<string, number> = {};
    const withFirstError: Record<string, number> = {};
    let chunks = 0;
    let finalAnswerCorrect = 0;
    let rollouts = 0;
    for (const r of recs) {
      if (r.finalAnswerCorrect === true) finalAnswerCorrect++;
      if (isObj(r.cost)) rollouts += num(r.cost.rollouts);
      for (const [s, fe] of Object.entries(isObj(r.firstError) ? r.firstError : {})) {
        withFirstError[s] ??= 0;
        if (typeof fe === 'number' && fe >= 0) withFirstError[s]++;
      }
      const softThreshold = softThresholdOf(r);
      for (const c of Array.isArray(r.chunks) ? r.chunks.filter(isObj) : []) {
        chunks++;
        for (const [s, v] of Object.entries(isObj(c.labels) ? c.labels : {})) {
          if (v === null || v === undefined) continue;
          labelled[s] = (labelled[s] ?? 0) + 1;
          const positive = typeof v === 'number' ? isPositiveLabel(v, softThreshold) : v === true;
          pos[s] = (pos[s] ?? 0) + (positive ? 1 : 0);
        }
      }
    }
    const signals = [...new Set([...Object.keys(withFirstError), ...Object.keys(labelled)])];
    return {
      kind,
      solutions: recs.length,
      chunks,
      signals,
      positiveShare: Object.fromEntries(
        signals.map((s) => [s, labelled[s] ? (pos[s] ?? 0) / labelled[s] : 0]),
      ),
      withFirstError,
      finalAnswerCorrect,
      rollouts,
    };
  }
  if (kind === 'samples') {
    let samples = 0;
    let correct = 0;
    let solved = 0;
    for (const r of recs) {
      const list = Array.isArray(r.samples) ? r.samples.filter(isObj) : [];
      samples += list.length;
      const right = list.filter((s) => s.correct === true).length;
      correct += right;
      if (right > 0) solved++;
    }
    return { kind, problems: recs.length, samples, correct, solved };
  }
  if (kind === 'predictions') {
    const subsets: Record<string, { n: number; exact: number }> = {};
    const pairs: Array<[number, number | null]> = [];
    let exact = 0;
    let judge: string | null = null;
    for (const r of recs) {
      if (typeof r.label !== 'number') continue;
      judge ??= typeof r.judge === 'string' ? r.judge : null;
      const p = typeof r.prediction === 'number' ? r.prediction : null;
      pairs.push([r.label, p]);
      const s = typeof r.subset === 'string' ? r.subset : '?';
      subsets[s] ??= { n: 0, exact: 0 };
      subsets[s].n++;
      if (p === r.label) {
        subsets[s].exact++;
        exact++;
      }
    }
    return { kind, samples: pairs.length, judge, subsets, exact, pairs };
  }
  if (kind === 'chunk-judgments') {
    const out: ChunkJudgmentFileSummary = {
      kind,
      chunks: recs.length,
      solutions: new Set(recs.map((r) => r.solution)).size,
      agree: 0,
      disagree: 0,
      abstained: 0,
      unlabelled: 0,
      falsePositive: 0,
      falseNegative: 0,
      disagreements: [],
    };
    recs.forEach((r, i) => {
      if (typeof r.label !== 'boolean') out.unlabelled++;
      else if (r.agrees === true) out.agree++;
      else if (r.agrees === false) {
        out.disagree++;
        if (r.label) out.falseNegative++;
        else out.falsePositive++;
        if (out.disagreements.length < 50) out.disagreements.push(i);
      } else out.abstained++;
    });
    return out;
  }
  if (kind === 'selection') {
    const out: SelectionFileSummary = {
      kind,
      problems: recs.length,
      picked: 0,
      differ: 0,
      candidates: 0,
      judgeCalls: 0,
      judgeTokens: 0,
    };
    for (const r of recs) {
      const chosen = isObj(r.chosen) ? r.chosen : null;
      const outcome = isObj(r.outcomeOnly) ? r.outcomeOnly : null;
      if (chosen) out.picked++;
      if (chosen && outcome && chosen.index !== outcome.index) out.differ++;
      if (Array.isArray(r.candidates)) out.candidates += r.candidates.length;
      const judge = isObj(r.cost) && isObj(r.cost.judge) ? r.cost.judge : null;
      out.judgeCalls += judge ? num(judge.calls) : 0;
      out.judgeTokens += tokens(judge);
    }
    return out;
  }
  return null;
}
