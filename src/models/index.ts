/** Model backends: policies, OpenAI-compatible servers, local GGUF, the call cache and the provider registry (the contract itself is `core/model.ts`). */

export type * from '../core/model.js';
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
export { ggufProvider, openaiProvider } from './providers.js';
export {
  type CreateModelOptions,
  createModel,
  getProvider,
  type ModelProvider,
  type ModelSpec,
  parseModelSpec,
  providerNames,
  registerProvider,
} from './registry.js';
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
