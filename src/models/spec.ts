import { UsageError } from '../core/errors.js';
import { createSimModel } from '../sim/model.js';
import { openStore } from '../store/db.js';
import type { BatchExchange } from './batch.js';
import { type CacheMode, withCache } from './cache.js';
import { createGgufModel } from './gguf.js';
import { OpenAIModel } from './openai.js';
import type { LanguageModel } from './types.js';

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
  /** Generate requests go through batch files (openai only; see `batch.ts`). */
  batch?: BatchExchange;
}

/** A parsed model spec. */
export type ModelSpec =
  | { backend: 'openai'; model: string }
  | { backend: 'gguf'; model: string }
  | { backend: 'sim'; spec: string };

const SPEC_HELP = 'expected openai:<model>, gguf:<path or hf: URI>, or sim[:name][?key=value&…]';

/** Parse a model spec string (see docs/models.md). */
export function parseModelSpec(spec: string): ModelSpec {
  const s = spec.trim();
  if (s === 'sim' || s.startsWith('sim:') || s.startsWith('sim?') || s.startsWith('sim['))
    return { backend: 'sim', spec: s };
  const colon = s.indexOf(':');
  const backend = colon < 0 ? s : s.slice(0, colon);
  const rest = colon < 0 ? '' : s.slice(colon + 1);
  if (backend === 'openai') {
    if (rest === '') throw new UsageError(`model spec "${spec}" names no model: ${SPEC_HELP}`);
    return { backend: 'openai', model: rest };
  }
  if (backend === 'gguf') {
    if (rest === '') throw new UsageError(`model spec "${spec}" names no GGUF file: ${SPEC_HELP}`);
    return { backend: 'gguf', model: rest };
  }
  throw new UsageError(`unknown model spec "${spec}": ${SPEC_HELP}`);
}

/**
 * Build a model from a spec string — the one way every area (label, judge, search, sample)
 * gets a model. `openai:` and `gguf:` models are wrapped in the SQLite call cache unless
 * `noCache`; in-process `sim` models are not (a call costs less than a cache lookup).
 */
export async function createModel(spec: string, options: CreateModelOptions = {}): Promise<LanguageModel> {
  const parsed = parseModelSpec(spec);
  if (options.batch && parsed.backend !== 'openai')
    throw new UsageError(
      `batch files (--batch-out / --batch-in) carry requests for an OpenAI-compatible engine: use --policy openai:<model>, not "${spec}"`,
    );
  let model: LanguageModel;
  switch (parsed.backend) {
    case 'openai': {
      const baseUrl = options.baseUrl ?? process.env.OPENAI_BASE_URL;
      if (!baseUrl)
        throw new UsageError(
          `model "${spec}" needs a server: pass --base-url http://HOST:PORT/v1 or set OPENAI_BASE_URL`,
        );
      model = new OpenAIModel({
        model: parsed.model,
        baseUrl,
        apiKey: options.apiKey,
        concurrency: options.concurrency,
        timeoutMs: options.timeoutMs,
        maxRetries: options.maxRetries,
        onWarning: options.onWarning,
        batch: options.batch,
      });
      break;
    }
    case 'gguf':
      model = await createGgufModel({ model: parsed.model, threads: options.threads });
      break;
    case 'sim':
      return createSimModel(parsed.spec);
  }
  return options.noCache
    ? model
    : withCache(model, openStore(options.storePath), { mode: options.cacheMode });
}
