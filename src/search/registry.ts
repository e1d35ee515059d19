import { UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { beamSearch } from './beam.js';
import { bestOfN } from './best-of-n.js';
import { chunkReset } from './chunk-reset.js';
import { resolveSearchConfig, type SearchConfig } from './config.js';
import { greedyPrmSearch } from './greedy-prm.js';
import { majorityVote } from './majority.js';
import { gloreRefine } from './refine.js';
import { singleSample } from './sample.js';
import type { SearchDeps, SearchResult } from './types.js';
import { weightedVote } from './weighted-vote.js';

/** A strategy: a plain function of problem, config and dependencies (policy, judge, outcome, checker). */
export type Strategy = (problem: Problem, config: SearchConfig, deps: SearchDeps) => Promise<SearchResult>;

export interface StrategyInfo {
  run: Strategy;
  /** Whether it calls the step judge. */
  needsJudge: boolean;
  /** The config field that sets its compute budget, for budget sweeps. */
  budget?: keyof SearchConfig;
  description: string;
}

/** Every strategy by name. */
export const STRATEGIES = {
  sample: { run: singleSample, needsJudge: false, description: 'one sampled solution, no judge (baseline)' },
  majority: {
    run: majorityVote,
    needsJudge: false,
    budget: 'n',
    description: 'self-consistency: N samples, most frequent final answer',
  },
  'best-of-n': {
    run: bestOfN,
    needsJudge: true,
    budget: 'n',
    description: 'N samples, highest aggregated step score (last/min/product/mean)',
  },
  'weighted-vote': {
    run: weightedVote,
    needsJudge: true,
    budget: 'n',
    description: 'N samples, final answers weighted by aggregated step score',
  },
  beam: {
    run: beamSearch,
    needsJudge: true,
    budget: 'n',
    description: 'beam search: keep top N/m beams by step score, expand each m ways',
  },
  'greedy-prm': {
    run: greedyPrmSearch,
    needsJudge: true,
    budget: 'childrenPerNode',
    description: 'HGS-PRM greedy step search with backtracking',
  },
  'chunk-reset': {
    run: chunkReset,
    needsJudge: true,
    budget: 'maxAttempts',
    description: 'StepWiser chunk-reset: regenerate a chunk the judge rejects (up to 5 attempts)',
  },
  refine: {
    run: gloreRefine,
    needsJudge: true,
    description: 'GLoRe: outcome model decides when, step judge where; global and local refinement',
  },
} satisfies Record<string, StrategyInfo>;

export type StrategyName = keyof typeof STRATEGIES;

export const STRATEGY_NAMES = Object.keys(STRATEGIES) as StrategyName[];

/** The strategy of that name, or a UsageError listing the known names. */
export function getStrategy(name: string): StrategyInfo {
  const s = (STRATEGIES as Record<string, StrategyInfo>)[name];
  if (!s) throw new UsageError(`unknown strategy "${name}" (known: ${STRATEGY_NAMES.join(', ')})`);
  return s;
}

/**
 * Run a strategy on one problem. `config` is completed with the domain's preset and
 * {@link DEFAULT_SEARCH_CONFIG}, and checked. The result carries the final text, the checked answer, the chunks with verdicts and
 * attempts, the trace of attempts and backtracks, and the cost.
 */
export async function runStrategy(
  name: string,
  problem: Problem,
  config: Partial<SearchConfig>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const s = getStrategy(name);
  if (s.needsJudge && !deps.judge) throw new UsageError(`strategy ${name} needs a judge (--judge <spec>)`);
  // The domain's preset (code: smaller token budgets) sits under what the caller set.
  const set = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  const result = await s.run(problem, resolveSearchConfig({ ...deps.domain?.preset, ...set }), deps);
  return deps.judgeUsedGold ? { ...result, judgeUsedGold: true } : result;
}
