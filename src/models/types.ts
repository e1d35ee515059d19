/** The model contract lives in the bottom layer (`core/model.ts`); this path re-exports it. */
export type * from '../core/model.js';
