export * from './job.js';
export * from './llm.js';
