export * from './app.js';
export * from './files.js';
export * from './summary.js';
