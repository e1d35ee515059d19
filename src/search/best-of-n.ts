import { z } from 'zod';
import { setting } from '../core/settings-schema.js';
import type { Problem } from '../core/types.js';
import { aggregateScores, argmaxBy } from './aggregate.js';
import { SearchRuntime, type StepRuling } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchChunk, SearchDeps, SearchResult, TraceNode } from './types.js';

/** A whole sampled solution with its step rulings and aggregate score. */
export interface ScoredCandidate {
  text: string;
  chunks: string[];
  rulings: StepRuling[];
  /** Aggregate of the step scores (config.aggregation). */
  score: number;
  answer: string | null;
  node: TraceNode;
}

/** Best-of-N's own settings (N and the aggregation are shared: ./settings.ts). */
export const BEST_OF_N_SETTINGS = z.object({
  checkCandidates: setting(z.boolean().default(false), {
    help: 'check every candidate too, not only the chosen one, and report oracle (some candidate is right: what a perfect verifier would reach) and passing (how many are); costs a check per candidate (code: a sandbox run each)',
  }),
});

/**
 * The first N members of the problem's solution pool (src/search/pool.ts), each judged once on
 * every chunk (one judge call per solution) unless `judge` is false.
 */
export async function sampleAndScore(
  rt: SearchRuntime,
  _problem: Problem,
  options: { judge?: boolean } = {},
): Promise<ScoredCandidate[]> {
  const { config } = rt;
  const pooled = await rt.poolCandidates(config.n, { judge: options.judge !== false });
  return pooled.map(({ text, chunks, rulings }, i) => {
    const score = aggregateScores(
      rulings.map((r) => r.score),
      config.aggregation,
    );
    const answer = rt.answerOf(text);
    // Candidates are numbered from 0, as `stats.chosen` and the output files number them.
    const node = rt.node({
      parent: null,
      depth: 0,
      text,
      status: 'pruned',
      final: true,
      label: `candidate ${i}`,
      score,
      answer,
    });
    return { text, chunks, rulings, score, answer, node };
  });
}

/** The chosen candidate's chunks with their verdicts. */
export function candidateChunks(c: ScoredCandidate): SearchChunk[] {
  return c.chunks.map((text, index) => ({
    index,
    text,
    verdict: c.rulings[index]?.verdict,
    score: c.rulings[index]?.score,
    ...(c.rulings[index]?.rationale ? { rationale: c.rulings[index].rationale } : {}),
    attempts: 1,
    node: c.node.id,
  }));
}

const meanScore = (c: ScoredCandidate): number =>
  aggregateScores(
    c.rulings.map((r) => r.score),
    'mean',
  );

/**
 * Best-of-N (METHODS §5): sample N solutions, score each by aggregating its step scores (last,
 * min, product, mean), return the argmax. Ties go to the higher mean step score, then to the
 * earlier sample.
 */
export async function bestOfN(
  problem: Problem,
  config: StrategyConfig<typeof BEST_OF_N_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('best-of-n', problem, config, deps);
  // Best-of-1 has nothing to choose between: it is plain sampling, at plain sampling's cost.
  const candidates = await sampleAndScore(rt, problem, { judge: config.n > 1 });
  const best = argmaxBy(candidates, (c) => c.score, meanScore);
  const chosen = candidates[best];
  if (!chosen) return rt.finish('', [], { candidates: 0 });
  chosen.node.status = 'accepted';
  let oracle: { oracle: boolean; passing: number } | undefined;
  if (config.checkCandidates) {
    const checks = await Promise.all(candidates.map((c) => rt.check(c.text)));
    const passing = checks.filter((c) => c.correct).length;
    oracle = { oracle: passing > 0, passing };
  }
  return rt.finish(chosen.text, candidateChunks(chosen), {
    candidates: candidates.length,
    chosen: best,
    score: chosen.score,
    aggregation: config.aggregation,
    ...oracle,
  });
}
