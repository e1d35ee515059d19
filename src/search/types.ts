import type { Cost, Problem, Verdict } from '../core/types.js';
import type { StepJudge } from '../judge/types.js';
import type { Policy } from '../models/policy.js';
import type { SearchDomain } from './domain.js';
import type { SolutionPools } from './pool.js';

/** How per-step scores become one solution score (METHODS §5, search-and-learn `utils/score.py`). */
export type Aggregation = 'last' | 'min' | 'product' | 'mean';

/** Decides whether a solution text answers a problem correctly (default: math answer check against `problem.answer`). */
export type SearchChecker = (problem: Problem, text: string) => { answer: string | null; correct: boolean };

/** What every strategy is given besides the problem and the config. */
export interface SearchDeps {
  policy: Policy;
  /** The step judge (PRM, generative judge, critic, simulated judge). Strategies that need none ignore it. */
  judge?: StepJudge;
  /**
   * The outcome model (ORM) for GLoRe refinement: a judge whose score for the last chunk of a
   * whole solution is read as the solution's probability of being correct. When absent, GLoRe
   * uses the step judge's `product` aggregate as the outcome score.
   */
  outcome?: StepJudge;
  /**
   * The kind of problem: prompt templates, step splitter, end-of-solution test and checker.
   * Default: math (`mathDomain`); code search passes `codeDomain` (src/code/domain.ts).
   */
  domain?: SearchDomain;
  /** Answer checker overriding the domain's (default: the domain's `check`). */
  checker?: SearchChecker;
  signal?: AbortSignal;
  /**
   * The judge or outcome model reads the gold answer (rollout judge, simulated ORM): allowed only
   * on request (`--allow-gold-judge`), and then every result says so.
   */
  judgeUsedGold?: boolean;
  /**
   * Judges that read the gold answer if their replies come from the simulated world (an outcome
   * model answered by `stepwise sim serve`, whatever its spec's name): when one of them turns out
   * simulated, the result is refused unless `allowGoldJudge`, and then says `judgeUsedGold`.
   */
  goldIfSimulated?: readonly StepJudge[];
  /** `--allow-gold-judge`: a gold-reading judge found at run time is recorded, not refused. */
  allowGoldJudge?: boolean;
  /**
   * Pools of whole solutions shared across strategies (bench search): sample, majority, best-of-n
   * and weighted vote read their first n candidates from the problem's pool instead of drawing
   * their own. Without it each run has its own pool, drawn with the same seeds.
   */
  pools?: SolutionPools;
}

/** What became of one attempt (a sampled step or a whole solution) in the search. */
export type TraceStatus =
  /** kept in the final solution / path */
  | 'accepted'
  /** judged and discarded, then regenerated or abandoned */
  | 'rejected'
  /** rejected, but kept anyway because every attempt was rejected (chunk-reset fallback, greedy limit) */
  | 'fallback'
  /** a candidate not selected, or a beam that fell out of the top N/m */
  | 'pruned'
  /** accepted at first, later abandoned by a backtrack */
  | 'backtracked'
  /** a finished candidate (beam, best-of-N) that was not the chosen one */
  | 'finished';

/**
 * Every {@link TraceStatus} with the sentence a reader of a search tree sees for it (the web view's
 * legend and node details, served by `GET /api/legend`), in legend order. Typed by the union: a
 * status without its sentence, or a sentence for no status, does not compile, so the view cannot
 * drift from the statuses the strategies write.
 */
export const TRACE_STATUS_LEGEND: Readonly<Record<TraceStatus, string>> = {
  accepted: 'kept in the final solution',
  rejected: 'judged negative and thrown away',
  fallback: 'kept although rejected (every attempt was rejected)',
  pruned: 'a candidate or beam not selected',
  backtracked: 'accepted, later abandoned by a backtrack',
  finished: 'a finished candidate that was not chosen',
};

/**
 * One attempt in the search tree: a sampled step (step-wise strategies) or a whole solution
 * (best-of-N, majority, refinement). `parent` points at the attempt it continues; null = the bare problem.
 */
export interface TraceNode {
  id: number;
  parent: number | null;
  /** Chunk index the attempt would occupy (0 for whole solutions). */
  depth: number;
  text: string;
  status: TraceStatus;
  verdict?: Verdict;
  score?: number;
  /** The judge's analysis of this attempt, where the judge writes one. */
  rationale?: string;
  /** The judge gave no parsable verdict on it (an abstention: score 0, never approval; docs/search.md). */
  abstained?: true;
  /** True when this attempt ended the solution (final answer or end of text). */
  final?: boolean;
  /** What the attempt is: `candidate 3`, `draft`, `global`, `local`, `beam 2`, … */
  label?: string;
  /** The extracted final answer of a whole-solution attempt. */
  answer?: string | null;
}

/** A backtrack of greedy search: from the node whose children were all negative, up to its parent (null = root). */
export interface Backtrack {
  from: number;
  to: number | null;
}

/** One chunk of the final solution. */
export interface SearchChunk {
  index: number;
  text: string;
  verdict?: Verdict;
  score?: number;
  /** The judge's analysis of this chunk, where the judge writes one. */
  rationale?: string;
  /** Attempts made for this chunk position (1 when it was accepted first time). */
  attempts: number;
  /** The trace node this chunk came from. */
  node?: number;
}

/** The outcome of one strategy on one problem. Always carries its cost. */
export interface SearchResult {
  strategy: string;
  problemId: string;
  finalText: string;
  answer: string | null;
  /** Whether `answer` matches the gold answer (absent when the problem has no gold answer). */
  correct?: boolean;
  chunks: SearchChunk[];
  /** Every attempt, as a tree (parent ids) the web view can draw. */
  trace: TraceNode[];
  backtracks: Backtrack[];
  /** Calls and tokens by role (policy, judge), over every model call the strategy made. */
  cost: Cost;
  /** Strategy-specific numbers: attempts, fallbacks, backtracks, refinement choice, vote counts, … */
  stats: Record<string, number | string | boolean>;
  /** Present and true when the judge steering the search read the gold answer. */
  judgeUsedGold?: true;
  /** Present and true when a policy reply came from the simulated world. */
  simulated?: true;
}
