export * from './db.js';
export * from './runs.js';
