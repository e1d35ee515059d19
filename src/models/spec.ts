/** Model specs and `createModel` now live in the provider registry; this path re-exports them. */
export {
  type CreateModelOptions,
  createModel,
  type ModelProvider,
  type ModelSpec,
  parseModelSpec,
} from './registry.js';
