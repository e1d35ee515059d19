export * from './export.js';
export * from './formats.js';
export * from './judge-rl.js';
export * from './label-file.js';
export * from './reward-server.js';
export * from './select.js';
export * from './sft.js';
export * from './verl.js';
