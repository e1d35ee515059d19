import { z } from 'zod';
import { setting } from '../core/settings-schema.js';
import type { Problem } from '../core/types.js';
import { argmaxBy, judgedFirst } from './aggregate.js';
import { chunksAlong } from './path.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult, TraceNode } from './types.js';

/** Greedy PRM search's own settings (the limits are chosen here: HGS-PRM does not fix them). */
export const GREEDY_PRM_SETTINGS = z.object({
  childrenPerNode: setting(z.number().int().min(1).default(5), {
    help: 'children sampled per node before it counts as exhausted (the budget of a sweep)',
    arg: 'k',
  }),
  maxBacktracks: setting(z.number().int().min(0).default(5), {
    help: 'backtracks per problem; after that the best child is taken and the search goes on',
    arg: 'k',
  }),
});

/**
 * HGS-PRM greedy search with backtracking ("Let's reward step by step", METHODS §5).
 *
 * At the current node, sample one child step at a time and judge it (positive / neutral /
 * negative, see `classifyStep`):
 * - a positive child is accepted at once and the search goes on from it;
 * - otherwise another child is sampled, up to `childrenPerNode` children per node;
 * - when the children run out and some are neutral, the best-scored neutral one is accepted;
 * - when all living children are negative, the search backtracks: the current node is abandoned
 *   (marked `backtracked`) and its parent samples further children. Backtracks are limited to
 *   `maxBacktracks` per problem; at the root, or once the limit is spent, the best-scored child is
 *   accepted anyway (`fallback`) and the search goes on.
 * The solution ends when an accepted step ends it or after `maxSteps` chunks.
 */
export async function greedyPrmSearch(
  problem: Problem,
  config: StrategyConfig<typeof GREEDY_PRM_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('greedy-prm', problem, config, deps);
  const children = new Map<number | null, TraceNode[]>();
  const path: TraceNode[] = [];
  let backtracksUsed = 0;
  let fallbacks = 0;
  let ended = false;
  const key = (): number | null => (path.length === 0 ? null : path[path.length - 1].id);

  while (!ended && path.length < config.maxSteps) {
    const parent = key();
    const kids = children.get(parent) ?? [];
    children.set(parent, kids);
    const chunks = path.map((n) => n.text);
    let accepted: TraceNode | undefined;
    while (!accepted && kids.length < config.childrenPerNode) {
      const [s] = await rt.sampleSteps(chunks, 1);
      if (!s) break;
      if (s.text === '') {
        if (s.final) {
          ended = true;
          break;
        }
        kids.push(rt.emptyAttempt(parent, path.length));
        continue;
      }
      const ruling = await rt.judgeStep([...chunks, s.text], path.length);
      const node = rt.judgedNode(
        { parent, depth: path.length, text: s.text, status: 'rejected', final: s.final },
        ruling,
      );
      kids.push(node);
      if (ruling.verdict === 'positive') accepted = node;
    }
    if (ended) break;
    if (!accepted) {
      const alive = kids.filter((k) => k.status !== 'backtracked' && k.text !== '');
      // An abstention is not a neutral verdict: it is never accepted as one (docs/search.md "Abstentions").
      const neutral = alive.filter((k) => k.verdict === 'neutral' && !k.abstained);
      if (neutral.length > 0) {
        accepted = neutral[argmaxBy(neutral, (k) => k.score ?? 0)];
      } else if (path.length > 0 && backtracksUsed < config.maxBacktracks) {
        const abandoned = path.pop()!;
        abandoned.status = 'backtracked';
        rt.backtracks.push({ from: abandoned.id, to: key() });
        backtracksUsed++;
        continue;
      } else {
        const pool = judgedFirst(alive.length > 0 ? alive : kids.filter((k) => k.text !== ''));
        const best = pool[argmaxBy(pool, (k) => k.score ?? 0)];
        if (!best) break;
        best.status = 'fallback';
        fallbacks++;
        path.push(best);
        if (best.final) ended = true;
        continue;
      }
    }
    accepted.status = 'accepted';
    path.push(accepted);
    if (accepted.final) ended = true;
  }
  return rt.finish(rt.join(path.map((n) => n.text)), chunksAlong(rt.trace, path), {
    backtracks: backtracksUsed,
    fallbacks,
    attempts: rt.trace.length,
    ended,
  });
}
