/**
 * The simulated reasoning world: synthetic multi-step arithmetic problems, a stochastic policy
 * with exact step values, simulated judges (generative judge, PRM, critic, outcome model,
 * refiner), an in-process `LanguageModel` and an OpenAI-compatible server. Everything it
 * produces is simulated; see docs/sim.md.
 */
export * from './dataset.js';
export * from './judges.js';
export * from './model.js';
export * from './options.js';
export * from './policy.js';
export * from './provider.js';
export * from './server.js';
export * from './tokens.js';
export * from './world.js';
