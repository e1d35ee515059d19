/** Model backends: the contract, policies, OpenAI-compatible servers, local GGUF, the call cache and model specs. */

export {
  type CachedModel,
  type CacheStats,
  cacheStatsOf,
  canonicalJson,
  generateKeyPrefix,
  withCache,
} from './cache.js';
export { type Endpoint, EndpointPool, type EndpointPoolOptions } from './endpoints.js';
export {
  createGgufModel,
  defaultThreads,
  flattenMessages,
  GgufModel,
  type GgufModelOptions,
} from './gguf.js';
export { createKeepAliveFetch, type KeepAliveFetch } from './http-fetch.js';
export {
  OpenAIModel,
  type OpenAIModelOptions,
  type OpenAIStats,
  parseBaseUrls,
  serverRoot,
} from './openai.js';
export * from './policy.js';
export {
  backoffDelay,
  classifyError,
  DEFAULT_RETRY_POLICY,
  type Failure,
  type FailureKind,
  parseRetryAfter,
  type RetryPolicy,
} from './retry.js';
export { deriveSeed, itemSeed } from './seeds.js';
export { type CreateModelOptions, createModel, type ModelSpec, parseModelSpec } from './spec.js';
export type * from './types.js';
