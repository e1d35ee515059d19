/** Model backends: policies, OpenAI-compatible servers, local GGUF, the call cache and the provider registry (the contract itself is `core/model.ts`). */

export {
  type CachedModel,
  type CacheMiddleware,
  type CacheStats,
  cacheMiddleware,
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
  innerModel,
  type ModelMiddleware,
  middlewareOf,
  type WrappedModel,
  wrapModel,
} from './middleware.js';
export {
  OpenAIModel,
  type OpenAIModelOptions,
  type OpenAIStats,
  parseBaseUrls,
  serverRoot,
} from './openai.js';
export * from './policy.js';
export { GGUF_SETTINGS, ggufProvider, OPENAI_SETTINGS, openaiProvider } from './providers.js';
export {
  type AnyModelProvider,
  createProviderRegistry,
  type ModelContext,
  type ModelOptions,
  type ModelProvider,
  type ModelSpec,
  type ProviderRegistry,
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
export { isSimulatedModel, provenanceMiddleware, worldOfModel, wroteSimulated } from './simulated.js';
export { type WarningSink, warningsMiddleware } from './warnings.js';
