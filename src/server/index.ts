export * from './app.js';
export * from './files.js';
