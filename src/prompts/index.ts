export * from './code.js';
export * from './critic.js';
export * from './judge.js';
export * from './orm.js';
export * from './policy.js';
export * from './prm.js';
export * from './refine.js';
export * from './segment.js';
