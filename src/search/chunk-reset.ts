import { z } from 'zod';
import { setting } from '../core/settings-schema.js';
import type { Problem } from '../core/types.js';
import { argmaxBy, judgedFirst } from './aggregate.js';
import { chunksAlong } from './path.js';
import { SearchRuntime, type StepRuling } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult, TraceNode } from './types.js';

/** Chunk-reset's own settings. */
export const CHUNK_RESET_SETTINGS = z.object({
  maxAttempts: setting(z.number().int().min(1).default(5), {
    help: 'attempts per chunk (StepWiser: 5)',
    arg: 'k',
  }),
  fallback: setting(z.enum(['best-scored', 'last']).default('best-scored'), {
    help: 'the attempt kept after the last one is rejected: the best-scored (earliest on ties), or the last',
    arg: 'which',
  }),
});

/**
 * StepWiser chunk-reset reasoning (METHODS §5): the policy writes one chunk (stop at the step
 * separator); the judge checks that chunk alone (`only: [newIndex]`); a chunk the judge does not
 * call negative is kept, a negative one is discarded and regenerated from the same prefix, up to
 * `maxAttempts` (5) attempts per chunk.
 *
 * After the last attempt is rejected (the paper does not say), the default `fallback:
 * 'best-scored'` keeps the attempt with the highest judge score (earliest on ties) and goes on;
 * `fallback: 'last'` keeps the last attempt. Neutral verdicts are accepted: only a negative one
 * resets the chunk. A judge reply without a parsable verdict is an abstention: the chunk is
 * regenerated (counted in `abstentions`), and the fallback picks among judged attempts when there
 * are any.
 */
export async function chunkReset(
  problem: Problem,
  config: StrategyConfig<typeof CHUNK_RESET_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('chunk-reset', problem, config, deps);
  const path: TraceNode[] = [];
  let fallbacks = 0;
  let resets = 0;
  let repeats = 0;
  let abstentions = 0;
  let ended = false;
  while (!ended && path.length < config.maxSteps) {
    const chunks = path.map((n) => n.text);
    const parent = path.length === 0 ? null : path[path.length - 1].id;
    const attempts: TraceNode[] = [];
    // A regenerated chunk identical to an earlier attempt at this position gets the same ruling
    // without another judge call: same judge input, and judge calls are the cost being saved.
    const judged = new Map<string, StepRuling>();
    let kept: TraceNode | undefined;
    for (let a = 0; a < config.maxAttempts && !kept; a++) {
      const [s] = await rt.sampleSteps(chunks, 1);
      if (!s) break;
      if (s.text === '') {
        if (s.final) {
          ended = true;
          break;
        }
        attempts.push(rt.emptyAttempt(parent, path.length));
        continue;
      }
      let ruling = judged.get(s.text);
      // An abstention is not a ruling to reuse: the same chunk is put to the judge again.
      if (ruling && !ruling.abstained) repeats++;
      else {
        ruling = await rt.judgeStep([...chunks, s.text], path.length);
        judged.set(s.text, ruling);
      }
      const node = rt.judgedNode(
        { parent, depth: path.length, text: s.text, status: 'rejected', final: s.final },
        ruling,
      );
      attempts.push(node);
      // A reply with no parsable verdict is an abstention: the chunk is regenerated, not accepted.
      if (ruling.abstained) abstentions++;
      else if (ruling.verdict !== 'negative') {
        node.status = 'accepted';
        kept = node;
      } else resets++;
    }
    if (ended && !kept) break;
    if (!kept) {
      // An abstained attempt is chosen only when no attempt was judged (docs/search.md "Abstentions").
      const real = judgedFirst(attempts.filter((n) => n.text !== ''));
      if (real.length === 0) break;
      kept = config.fallback === 'last' ? real[real.length - 1] : real[argmaxBy(real, (n) => n.score ?? 0)];
      kept.status = 'fallback';
      fallbacks++;
    }
    path.push(kept);
    if (kept.final) ended = true;
  }
  return rt.finish(rt.join(path.map((n) => n.text)), chunksAlong(rt.trace, path), {
    resets,
    fallbacks,
    attempts: rt.trace.length,
    ended,
    repeatedAttempts: repeats,
    abstentions,
  });
}
