import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { BEAM_SETTINGS, beamSearch } from './beam.js';
import { BEST_OF_N_SETTINGS, bestOfN } from './best-of-n.js';
import { CHUNK_RESET_SETTINGS, chunkReset } from './chunk-reset.js';
import { GREEDY_PRM_SETTINGS, greedyPrmSearch } from './greedy-prm.js';
import { MAJORITY_SETTINGS, majorityVote } from './majority.js';
import { gloreRefine, REFINE_SETTINGS } from './refine.js';
import { SAMPLE_SETTINGS, singleSample } from './sample.js';
import { joinStrategySettings, resolveStrategyConfig, type SettingsOf } from './strategy-settings.js';
import type { SearchDeps, SearchResult } from './types.js';
import { WEIGHTED_VOTE_SETTINGS, weightedVote } from './weighted-vote.js';

/**
 * A strategy: a plain function of problem, config and dependencies (policy, judge, outcome,
 * checker), with the schema of its own settings (declared in its file, next to the algorithm).
 */
export interface StrategyInfo<S extends z.ZodObject = z.ZodObject> {
  // biome-ignore lint/suspicious/noExplicitAny: each strategy reads its own config type
  run: (problem: Problem, config: any, deps: SearchDeps) => Promise<SearchResult>;
  /** Its own settings (the shared ones are in ./settings.ts): flags, help, defaults, checks. */
  settings: S;
  /** Whether it calls the step judge. */
  needsJudge: boolean;
  /** The setting that sets its compute budget, for budget sweeps (`bench search`). */
  budget?: string;
  description: string;
}

/**
 * Every strategy by name: adding one is its file (the function and its settings schema) and one
 * line here (docs/extending.md, "A search strategy").
 */
export const STRATEGIES = {
  sample: {
    run: singleSample,
    settings: SAMPLE_SETTINGS,
    needsJudge: false,
    description: 'one sampled solution, no judge (baseline)',
  },
  majority: {
    run: majorityVote,
    settings: MAJORITY_SETTINGS,
    needsJudge: false,
    budget: 'n',
    description: 'self-consistency: N samples, most frequent final answer',
  },
  'best-of-n': {
    run: bestOfN,
    settings: BEST_OF_N_SETTINGS,
    needsJudge: true,
    budget: 'n',
    description: 'N samples, highest aggregated step score (last/min/product/mean)',
  },
  'weighted-vote': {
    run: weightedVote,
    settings: WEIGHTED_VOTE_SETTINGS,
    needsJudge: true,
    budget: 'n',
    description: 'N samples, final answers weighted by aggregated step score',
  },
  beam: {
    run: beamSearch,
    settings: BEAM_SETTINGS,
    needsJudge: true,
    budget: 'n',
    description: 'beam search: keep top N/m beams by step score, expand each m ways',
  },
  'greedy-prm': {
    run: greedyPrmSearch,
    settings: GREEDY_PRM_SETTINGS,
    needsJudge: true,
    budget: 'childrenPerNode',
    description: 'HGS-PRM greedy step search with backtracking',
  },
  'chunk-reset': {
    run: chunkReset,
    settings: CHUNK_RESET_SETTINGS,
    needsJudge: true,
    budget: 'maxAttempts',
    description: 'StepWiser chunk-reset: regenerate a chunk the judge rejects (up to 5 attempts)',
  },
  refine: {
    run: gloreRefine,
    settings: REFINE_SETTINGS,
    needsJudge: true,
    description: 'GLoRe: outcome model decides when, step judge where; global and local refinement',
  },
} satisfies Record<string, StrategyInfo>;

export type StrategyName = keyof typeof STRATEGIES;

/** A strategy's function. */
export type Strategy = StrategyInfo['run'];

export const STRATEGY_NAMES = Object.keys(STRATEGIES) as StrategyName[];

/**
 * Every search setting: the shared ones (./settings.ts), then each strategy's, its help starting
 * with the strategy's name. The flags of `search`, `solve` and `bench search`, `--config` replay,
 * the settings hash and the docs/cli.md table are derived from it.
 */
export const SEARCH_SETTINGS = joinStrategySettings(STRATEGIES);

/**
 * Every knob of every strategy, in one object (search-and-learn style): the output of
 * {@link SEARCH_SETTINGS}, and the step separator (a library setting). Each strategy reads the
 * shared fields and its own.
 */
export type SearchConfig = SettingsOf<typeof STRATEGIES>;

/** Every setting with its default (the step separator too); optional ones unset. */
export const DEFAULT_SEARCH_CONFIG = Object.freeze(
  resolveStrategyConfig(SEARCH_SETTINGS),
) as Readonly<SearchConfig>;

/**
 * Defaults filled in and every field checked, alone against {@link SEARCH_SETTINGS} and together
 * (the verdict thresholds); throws a UsageError naming the field as `nameOf` says (default
 * `search config: <field>`; the CLI names its flag).
 */
export function resolveSearchConfig(
  partial: Partial<SearchConfig> = {},
  nameOf?: (key: string) => string,
): SearchConfig {
  return resolveStrategyConfig(SEARCH_SETTINGS, partial, nameOf) as SearchConfig;
}

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
