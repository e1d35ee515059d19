import type { z } from 'zod';
import type { Cost, Problem } from '../core/types.js';
import type { BacktrackSchema, SearchChunkSchema, TraceNodeSchema } from '../data/record-kinds.js';
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

/** What became of one attempt (a sampled step or a whole solution) in the search (TraceNodeSchema says each). */
export type TraceStatus = TraceNode['status'];

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

/** One attempt in the search tree, as search rows declare it (src/data/record-kinds.ts). */
export type TraceNode = z.infer<typeof TraceNodeSchema>;

/** A backtrack of greedy search: from the node whose children were all negative, up to its parent (null = root). */
export type Backtrack = z.infer<typeof BacktrackSchema>;

/** One chunk of the final solution. */
export type SearchChunk = z.infer<typeof SearchChunkSchema>;

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
