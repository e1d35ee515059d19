import { z } from 'zod';
import { setting } from '../core/settings-schema.js';
import type { Problem } from '../core/types.js';
import { aggregateScores, argmaxBy } from './aggregate.js';
import { chunksAlong, pathTo } from './path.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult, TraceNode } from './types.js';

interface Beam {
  chunks: string[];
  scores: number[];
  node: TraceNode;
  final: boolean;
  score: number;
}

/** Beam search's own settings (N and the aggregation are shared: ./settings.ts). */
export const BEAM_SETTINGS = z.object({
  beamWidth: setting(z.number().int().min(1).default(4), {
    help: 'keep the top N/m beams, expand each m ways (search-and-learn: m = 4)',
    arg: 'm',
  }),
});

/**
 * Beam search (search-and-learn): the bare problem is expanded N ways; at every depth each step
 * is judged, beams that end are set aside as finished, the top N/m open beams (by aggregated step
 * score) survive and each is expanded m ways, so every depth costs N step samples. The search
 * stops when N beams have finished, none is open, or `maxSteps` is reached (open beams then count
 * as finished). The best finished beam is returned.
 */
export async function beamSearch(
  problem: Problem,
  config: StrategyConfig<typeof BEAM_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('beam', problem, config, deps);
  const keep = Math.max(1, Math.floor(config.n / config.beamWidth));
  let active: Array<Omit<Beam, 'node'> & { node: TraceNode | null }> = [
    { chunks: [], scores: [], node: null, final: false, score: 0 },
  ];
  const finished: Beam[] = [];
  for (let depth = 0; depth < config.maxSteps && active.length > 0; depth++) {
    // Expand every surviving beam, then judge every new step, each batch concurrently (seeds are
    // drawn in beam order before any await, so runs reproduce).
    const expansions = await Promise.all(
      active.map((beam) => rt.sampleSteps(beam.chunks, depth === 0 ? config.n : config.beamWidth)),
    );
    const pending = active.flatMap((beam, b) => expansions[b].map((s) => ({ beam, s })));
    const rulings = await Promise.all(
      pending.map(({ beam, s }) => (s.text === '' ? null : rt.judgeStep([...beam.chunks, s.text], depth))),
    );
    const candidates: Beam[] = [];
    pending.forEach(({ beam, s }, k) => {
      const ruling = rulings[k];
      if (ruling === null) {
        // The model ended the solution (or wrote an empty step) right after the prefix.
        const node = rt.node({
          parent: beam.node?.id ?? null,
          depth,
          text: '',
          status: 'pruned',
          final: s.final,
        });
        if (s.final && beam.node)
          candidates.push({ chunks: beam.chunks, scores: beam.scores, node, final: true, score: beam.score });
        return;
      }
      const chunks = [...beam.chunks, s.text];
      const scores = [...beam.scores, ruling.score];
      const node = rt.judgedNode(
        { parent: beam.node?.id ?? null, depth, text: s.text, status: 'pruned', final: s.final },
        ruling,
      );
      candidates.push({
        chunks,
        scores,
        node,
        final: s.final,
        score: aggregateScores(scores, config.aggregation),
      });
    });
    for (const c of candidates) if (c.final) finished.push(c);
    const open = candidates.filter((c) => !c.final);
    if (finished.length >= config.n || depth === config.maxSteps - 1) {
      if (depth === config.maxSteps - 1) finished.push(...open);
      active = [];
      break;
    }
    const order = open.map((c, i) => ({ c, i })).sort((a, b) => b.c.score - a.c.score || a.i - b.i);
    active = order.slice(0, keep).map((o) => o.c);
  }
  const pool = finished.length > 0 ? finished : (active.filter((b) => b.node !== null) as Beam[]);
  const best =
    pool[
      argmaxBy(
        pool,
        (b) => b.score,
        (b) => aggregateScores(b.scores, 'mean'),
      )
    ];
  if (!best) return rt.finish('', [], { finished: 0 });
  for (const b of finished) b.node.status = 'finished';
  const path = pathTo(rt.trace, best.node);
  for (const n of path) n.status = 'accepted';
  return rt.finish(rt.join(best.chunks), chunksAlong(rt.trace, path), {
    finished: finished.length,
    keep,
    score: best.score,
    aggregation: config.aggregation,
  });
}
