import { z } from 'zod';
import type { Problem } from '../core/types.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult } from './types.js';
import { tallyVotes, winningGroup } from './vote.js';

/** Majority vote has no settings of its own: N is the shared budget `n` (./settings.ts). */
export const MAJORITY_SETTINGS = z.object({});

/**
 * Self-consistency: sample N solutions, vote by final answer (each counts 1), return the first
 * solution of the winning answer. No judge. With no answer anywhere, the first sample is returned.
 */
export async function majorityVote(
  problem: Problem,
  config: StrategyConfig<typeof MAJORITY_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('majority', problem, config, deps);
  // The first N members of the problem's solution pool (src/search/pool.ts): nested across N.
  const texts = (await rt.poolCandidates(config.n, { judge: false })).map((c) => c.text);
  const answers = texts.map((t) => rt.answerOf(t));
  const groups = tallyVotes(
    answers,
    texts.map(() => 1),
  );
  const win = winningGroup(groups);
  const chosen = win ? win.first : 0;
  const nodes = texts.map((text, i) =>
    rt.node({
      parent: null,
      depth: 0,
      text,
      status: i === chosen ? 'accepted' : 'pruned',
      final: true,
      label: `candidate ${i}`,
      answer: answers[i],
      score: groups.find((g) => g.members.includes(i))?.count,
    }),
  );
  const finalText = texts[chosen] ?? '';
  const chunks = rt.split(finalText).map((text, index) => ({
    index,
    text,
    attempts: 1,
    node: nodes[chosen]?.id,
  }));
  return rt.finish(finalText, chunks, {
    candidates: texts.length,
    distinctAnswers: groups.length,
    winningVotes: win?.count ?? 0,
  });
}
