/**
 * stepwise — the library entry. Everything the CLI can do is reachable from here.
 * Each layer re-exports its public API; add new modules to the section of their layer.
 */

export * from './core/cost.js';
export * from './core/errors.js';
export * from './core/rng.js';
export * from './core/segment.js';
// code (sandboxed tests, code steps, mutation labels, code search)
export * from './code/index.js';
// core
export * from './core/types.js';
// data
export * from './data/index.js';
export * from './jobs/jsonl.js';
export * from './jobs/run-job.js';
// evaluate
export * from './evaluate/index.js';
// judge
export * from './judge/index.js';
// label
export * from './label/index.js';
// models
export type * from './models/types.js';
export * from './models/policy.js';
export * from './models/index.js';
// prompts
export * from './prompts/index.js';
// sample
export * from './sample/index.js';
// search
export * from './search/index.js';
// server (web view)
export * from './server/index.js';
// sim (the simulated world)
export * from './sim/index.js';
// store and jobs
export * from './store/index.js';
// train
export * from './train/index.js';
// verify
export * from './verify/index.js';
export * from './verify/code/index.js';
export { VERSION } from './version.js';
