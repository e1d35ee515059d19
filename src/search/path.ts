import type { SearchChunk, TraceNode } from './types.js';

/** The nodes from the root to `leaf`, root first. */
export function pathTo(trace: readonly TraceNode[], leaf: TraceNode | null): TraceNode[] {
  const out: TraceNode[] = [];
  for (let n: TraceNode | null = leaf; n; n = n.parent === null ? null : trace[n.parent]) out.unshift(n);
  return out;
}

/**
 * The final solution's chunks along a path of step nodes (empty end-of-text nodes skipped);
 * `attempts` of a chunk is the number of steps sampled at its position under the same parent.
 */
export function chunksAlong(trace: readonly TraceNode[], path: readonly TraceNode[]): SearchChunk[] {
  return path
    .filter((n) => n.text !== '')
    .map((n, index) => ({
      index,
      text: n.text,
      verdict: n.verdict,
      score: n.score,
      ...(n.rationale ? { rationale: n.rationale } : {}),
      attempts: trace.filter((t) => t.parent === n.parent && t.depth === n.depth).length,
      node: n.id,
    }));
}
