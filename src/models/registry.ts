import { UsageError } from '../core/errors.js';
import type { LanguageModel } from '../core/model.js';
import { openStore } from '../store/db.js';
import type { BatchExchange } from './batch.js';
import { type CacheMode, withCache } from './cache.js';

/** Settings shared by every model spec (flags of the CLI commands that take a model). */
export interface CreateModelOptions {
  /** OpenAI-compatible base URL(s); default `OPENAI_BASE_URL`. Comma-separated = several endpoints. */
  baseUrl?: string;
  /** Default `OPENAI_API_KEY` (a dummy when unset: local servers ignore it). */
  apiKey?: string;
  /** Requests in flight per endpoint (openai; default 64). */
  concurrency?: number;
  /** Timeout of one HTTP request in ms (openai; default 600,000). */
  timeoutMs?: number;
  /** Retries after a failed attempt (openai; default 8). */
  maxRetries?: number;
  /** Do not wrap the model in the SQLite call cache. */
  noCache?: boolean;
  /** Store file of the cache (default `$STEPWISE_HOME/store.sqlite`). */
  storePath?: string;
  /** CPU threads (gguf; default the machine's cores). */
  threads?: number;
  /** Called with each backend warning once (e.g. print to stderr). */
  onWarning?: (message: string) => void;
  /** What the call cache keeps of each sample (default `full`; see `cache.ts`). */
  cacheMode?: CacheMode;
  /** Generate requests go through batch files (only providers with `batch`; see `batch.ts`). */
  batch?: BatchExchange;
}

/** A parsed model spec: the provider's name and what follows it. */
export interface ModelSpec {
  /** Registered provider name: `openai`, `gguf`, `sim`, … */
  provider: string;
  /** What follows `provider:` (the model name, file, …); empty when the spec is the bare name. */
  id: string;
  /** The whole spec, trimmed (a provider with its own syntax, like `sim?step_error=0.2`, reads this). */
  spec: string;
}

/**
 * A model backend as a plugin: the registry knows it by name and never looks past this type.
 * `createModel('openai:Qwen')` finds the provider `openai` and calls its `create`.
 */
export interface ModelProvider {
  readonly name: string;
  /** How a spec of this provider is written, for error messages (`openai:<model>`). */
  readonly usage: string;
  /** Wrap its models in the SQLite call cache (false where a call costs less than a lookup). */
  readonly cached: boolean;
  /** It can carry generate requests in batch files (`--batch-out` / `--batch-in`). */
  readonly batch?: boolean;
  create(spec: ModelSpec, options: CreateModelOptions): Promise<LanguageModel> | LanguageModel;
}

const providers = new Map<string, ModelProvider>();

/** Register a backend (a composition root does this; registering a name twice replaces it). */
export function registerProvider(provider: ModelProvider): void {
  if (!/^[a-z][a-z0-9-]*$/.test(provider.name))
    throw new Error(`provider name "${provider.name}" must be lowercase letters, digits and dashes`);
  providers.set(provider.name, provider);
}

/** The registered provider called `name`, if any. */
export function getProvider(name: string): ModelProvider | undefined {
  return providers.get(name);
}

/** Names of the registered providers, sorted. */
export function providerNames(): string[] {
  return [...providers.keys()].sort();
}

function specHelp(): string {
  const usages = [...providers.values()].map((p) => p.usage);
  if (usages.length === 0)
    return 'no model providers are registered (import the composition root, stepwise/src/providers, first)';
  return `expected ${usages.join(', or ')}`;
}

/**
 * Parse a model spec string (see docs/models.md): the provider's name runs up to the first
 * `:`, `?` or `[` (`sim?step_error=0.2` names `sim`). The provider must be registered.
 */
export function parseModelSpec(spec: string): ModelSpec {
  const s = spec.trim();
  const end = s.search(/[:?[]/);
  const provider = end < 0 ? s : s.slice(0, end);
  const id = end >= 0 && s[end] === ':' ? s.slice(end + 1) : '';
  if (!providers.has(provider)) throw new UsageError(`unknown model spec "${spec}": ${specHelp()}`);
  return { provider, id, spec: s };
}

/**
 * Build a model from a spec string — the one way every area (label, judge, search, sample)
 * gets a model. Models of a provider with `cached` are wrapped in the SQLite call cache unless
 * `noCache`.
 */
export async function createModel(spec: string, options: CreateModelOptions = {}): Promise<LanguageModel> {
  const parsed = parseModelSpec(spec);
  const provider = providers.get(parsed.provider)!;
  if (options.batch && !provider.batch)
    throw new UsageError(
      `batch files (--batch-out / --batch-in) carry requests for an OpenAI-compatible engine: use --policy openai:<model>, not "${spec}"`,
    );
  const model = await provider.create(parsed, options);
  if (model.specificationVersion !== 'v1')
    throw new Error(
      `provider "${provider.name}" returned a model of specification ${String(model.specificationVersion)}; stepwise speaks v1`,
    );
  return provider.cached && !options.noCache
    ? withCache(model, openStore(options.storePath), { mode: options.cacheMode })
    : model;
}
