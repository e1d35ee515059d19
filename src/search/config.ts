import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import type { Aggregation } from './types.js';

/**
 * Every knob of every strategy, in one object (search-and-learn style). Each strategy reads the
 * fields it needs; defaults follow the papers where they say, and are documented where they do not.
 */
export interface SearchConfig {
  /** Seed of every sampled call (policy and judge): same seed, same run. */
  seed: number;
  /**
   * Sampling temperature of the policy: 1, as everywhere in stepwise (the temperature StepWiser
   * estimates step values at, so a search samples the policy its labels describe); search-and-learn
   * uses 0.8.
   */
  temperature: number;
  /** Top-p of the policy (1 = off). */
  topP: number;
  /** Token budget of one whole-solution call (best-of-N, majority, sample, refinement). */
  maxTokens: number;
  /** Token budget of one step call (beam, greedy, chunk-reset). */
  maxStepTokens: number;
  /** Most chunks in one solution before a step-wise search stops. */
  maxSteps: number;
  /** Step separator: the stop string of step calls (under `paragraph` segmentation). */
  stepSeparator: string;
  /**
   * How the policy segments its solution: `paragraph` (steps end at `stepSeparator`) or `tags`
   * (the policy is asked for `<chunk>…</chunk>`, step calls stop at `</chunk>`, prefixes are the
   * policy's own text, and judges see the previous chunks as tagged chunks).
   */
  segmentation: Segmentation;

  /** N: solutions of best-of-N / majority / weighted vote, and beams of beam search. */
  n: number;
  /** How step scores become a solution score (best-of-N, weighted vote, beam ranking). */
  aggregation: Aggregation;
  /**
   * Best-of-N: check every candidate too, not only the chosen one, and report `oracle` (some
   * candidate is right: what a perfect verifier would reach) and `passing` (how many are). Costs a
   * check per candidate (code: a sandbox run each).
   */
  checkCandidates: boolean;
  /** m of beam search: keep the top N/m beams, expand each m ways. search-and-learn: 4. */
  beamWidth: number;

  /** Chunk-reset: attempts per chunk (StepWiser: 5). */
  maxAttempts: number;
  /**
   * Chunk-reset: what is kept after the last attempt is rejected. `best-scored` (default): the
   * attempt with the highest judge score, earliest on ties. `last`: the last attempt.
   */
  fallback: 'best-scored' | 'last';

  /** Greedy PRM search: children sampled per node before it counts as exhausted. */
  childrenPerNode: number;
  /** Greedy PRM search: backtracks allowed per problem; after that the best child is taken and the search goes on. */
  maxBacktracks: number;

  /**
   * Score → verdict mapping used by greedy search and chunk-reset. When both are unset (default),
   * the judge's own verdict is used. When set: score ≥ positiveAt → positive, score < negativeBelow
   * → negative, otherwise neutral.
   */
  positiveAt?: number;
  negativeBelow?: number;

  /**
   * Votes (k sampled judgments) per chunk asked of the judge. Unset (default): the judge's own
   * setting (its spec's `votes`, else 1 as in StepWiser).
   */
  judgeVotes?: number;

  /** GLoRe: the draft is refined when its outcome score is below this. */
  refineBelow: number;
  /**
   * GLoRe: temperature of the draft. Unset (default): the policy `temperature`. 0 gives greedy
   * drafts, as behind the paper's refinement numbers.
   */
  draftTemperature?: number;
  /** GLoRe: which refinements to try: both (default), or only one. */
  refinements: 'both' | 'global' | 'local';
}

/** Defaults: StepWiser (5 attempts, T = 1), search-and-learn (m = 4), HGS-PRM limits chosen here. */
export const DEFAULT_SEARCH_CONFIG: Readonly<SearchConfig> = Object.freeze({
  seed: 0,
  temperature: 1,
  topP: 1,
  maxTokens: 2048,
  maxStepTokens: 512,
  maxSteps: 40,
  stepSeparator: '\n\n',
  segmentation: 'paragraph',
  n: 8,
  aggregation: 'min',
  checkCandidates: false,
  beamWidth: 4,
  maxAttempts: 5,
  fallback: 'best-scored',
  childrenPerNode: 5,
  maxBacktracks: 5,
  refineBelow: 0.5,
  refinements: 'both',
});

export const AGGREGATIONS: readonly Aggregation[] = ['last', 'min', 'product', 'mean'];

function positiveInt(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1)
    throw new UsageError(`search config: ${name} must be a positive integer (got ${v})`);
}
function unit(name: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 1))
    throw new UsageError(`search config: ${name} must be between 0 and 1 (got ${v})`);
}

/** Defaults filled in and every field checked; throws UsageError naming the bad field. */
export function resolveSearchConfig(partial: Partial<SearchConfig> = {}): SearchConfig {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  const c: SearchConfig = { ...DEFAULT_SEARCH_CONFIG, ...defined };
  for (const k of [
    'n',
    'beamWidth',
    'maxAttempts',
    'childrenPerNode',
    'maxSteps',
    'maxTokens',
    'maxStepTokens',
  ] as const)
    positiveInt(k, c[k]);
  if (c.judgeVotes !== undefined) positiveInt('judgeVotes', c.judgeVotes);
  if (!Number.isInteger(c.maxBacktracks) || c.maxBacktracks < 0)
    throw new UsageError(
      `search config: maxBacktracks must be a non-negative integer (got ${c.maxBacktracks})`,
    );
  if (!Number.isInteger(c.seed))
    throw new UsageError(`search config: seed must be an integer (got ${c.seed})`);
  if (!(c.temperature >= 0))
    throw new UsageError(`search config: temperature must be ≥ 0 (got ${c.temperature})`);
  if (c.draftTemperature !== undefined && !(c.draftTemperature >= 0))
    throw new UsageError(`search config: draftTemperature must be ≥ 0 (got ${c.draftTemperature})`);
  unit('topP', c.topP);
  unit('positiveAt', c.positiveAt);
  unit('negativeBelow', c.negativeBelow);
  unit('refineBelow', c.refineBelow);
  if ((c.positiveAt === undefined) !== (c.negativeBelow === undefined))
    throw new UsageError('search config: set both positiveAt and negativeBelow, or neither');
  if (c.positiveAt !== undefined && c.negativeBelow !== undefined && c.negativeBelow > c.positiveAt)
    throw new UsageError('search config: negativeBelow must not exceed positiveAt');
  if (!AGGREGATIONS.includes(c.aggregation))
    throw new UsageError(
      `search config: aggregation must be one of ${AGGREGATIONS.join(', ')} (got ${c.aggregation})`,
    );
  if (c.fallback !== 'best-scored' && c.fallback !== 'last')
    throw new UsageError(`search config: fallback must be best-scored or last (got ${c.fallback})`);
  if (!['both', 'global', 'local'].includes(c.refinements))
    throw new UsageError(`search config: refinements must be both, global or local (got ${c.refinements})`);
  if (typeof c.checkCandidates !== 'boolean')
    throw new UsageError(`search config: checkCandidates must be true or false (got ${c.checkCandidates})`);
  if (c.segmentation !== 'paragraph' && c.segmentation !== 'tags')
    throw new UsageError(`search config: segmentation must be paragraph or tags (got ${c.segmentation})`);
  if (c.stepSeparator === '') throw new UsageError('search config: stepSeparator must not be empty');
  return c;
}
