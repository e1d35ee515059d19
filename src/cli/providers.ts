import { createDefaultRegistry } from '../providers/default.js';

/**
 * The CLI's provider registry: built once, here, from the shipped backends; every command that
 * turns a spec into a model or a judge is handed this value.
 */
export const providers = createDefaultRegistry();
