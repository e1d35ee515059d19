import { z } from 'zod';
import type { Problem } from '../core/types.js';
import { argmaxBy } from './aggregate.js';
import { candidateChunks, sampleAndScore } from './best-of-n.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult } from './types.js';
import { tallyVotes, winningGroup } from './vote.js';

/** Weighted vote has no settings of its own: N and the aggregation are shared (./settings.ts). */
export const WEIGHTED_VOTE_SETTINGS = z.object({});

/**
 * Weighted majority vote (METHODS §5): sample N solutions, score each like best-of-N, sum the
 * scores per distinct final answer; the answer with the largest sum wins, and its highest-scored
 * solution is returned. With no answer anywhere, it falls back to the best-scored solution.
 */
export async function weightedVote(
  problem: Problem,
  config: StrategyConfig<typeof WEIGHTED_VOTE_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('weighted-vote', problem, config, deps);
  const candidates = await sampleAndScore(rt, problem);
  const groups = tallyVotes(
    candidates.map((c) => c.answer),
    candidates.map((c) => c.score),
  );
  const win = winningGroup(groups);
  const pool = win ? win.members : candidates.map((_, i) => i);
  const chosenIndex = pool[argmaxBy(pool, (i) => candidates[i].score)];
  const chosen = candidates[chosenIndex];
  if (!chosen) return rt.finish('', [], { candidates: 0 });
  chosen.node.status = 'accepted';
  return rt.finish(chosen.text, candidateChunks(chosen), {
    candidates: candidates.length,
    distinctAnswers: groups.length,
    winningWeight: win?.weight ?? 0,
    aggregation: config.aggregation,
  });
}
