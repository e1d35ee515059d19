/**
 * stepwise — the library entry. Everything the CLI can do is reachable from here: each area
 * re-exports its public API from its own index. Kept in alphabetical order (biome sorts it).
 */

export * from './code/index.js';
export * from './core/cost.js';
export * from './core/errors.js';
export * from './core/http.js';
export type * from './core/model.js';
export * from './core/rng.js';
export * from './core/segment.js';
export { queryKeyOf } from './core/spec-query.js';
export * from './core/types.js';
export * from './data/index.js';
export * from './evaluate/index.js';
export * from './jobs/jsonl.js';
export * from './jobs/run-job.js';
export * from './judge/index.js';
export * from './label/index.js';
export * from './models/index.js';
export * from './models/policy.js';
export * from './prompts/index.js';
export { createDefaultRegistry, DEFAULT_PROVIDERS } from './providers/default.js';
export * from './sample/index.js';
export * from './search/index.js';
export * from './segment/index.js';
export * from './server/index.js';
export * from './sim/index.js';
export * from './store/index.js';
export * from './train/index.js';
export * from './verify/code/index.js';
export * from './verify/index.js';
export { VERSION } from './version.js';
