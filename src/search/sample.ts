import { z } from 'zod';
import type { Problem } from '../core/types.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchDeps, SearchResult } from './types.js';

/** The baseline has no settings of its own (it reads the shared ones: ./settings.ts). */
export const SAMPLE_SETTINGS = z.object({});

/**
 * The baseline: one sampled solution, no judge — member 0 of the problem's solution pool
 * (src/search/pool.ts), the same text best-of-1 and majority@1 return.
 */
export async function singleSample(
  problem: Problem,
  config: StrategyConfig<typeof SAMPLE_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('sample', problem, config, deps);
  const [{ text }] = await rt.poolCandidates(1, { judge: false });
  const node = rt.node({ parent: null, depth: 0, text, status: 'accepted', final: true, label: 'sample' });
  const chunks = rt.split(text).map((t, index) => ({
    index,
    text: t,
    attempts: 1,
    node: node.id,
  }));
  return rt.finish(text, chunks);
}
