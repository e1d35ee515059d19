export type * from './api.js';
export * from './app.js';
export * from './files.js';
export * from './summary.js';
