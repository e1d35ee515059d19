/**
 * The one model contract (in the spirit of the Vercel AI SDK's LanguageModelV2): every backend —
 * OpenAI-compatible HTTP, local GGUF, the simulated world — implements `LanguageModel`, and every
 * method (labeling, judging, search) talks only to this type. It sits in the bottom layer so that
 * prompts, backends and methods can all name it without importing each other; backends register
 * with the provider registry (`models/registry.ts`).
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One generation request. Exactly one of `prompt` (raw completion) or `messages` (chat) is set.
 * Chat messages that end with an assistant message ask the backend to continue that message
 * (vLLM `continue_final_message`), which is how a policy continues a solution prefix.
 */
export interface GenerateRequest {
  prompt?: string;
  messages?: ChatMessage[];
  /** Samples wanted (default 1). Backends without native n send n requests and say so in warnings. */
  n?: number;
  temperature?: number;
  topP?: number;
  /** Always set by callers: servers default to tiny values (vLLM: 16). */
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  /** Number of top log-probabilities per generated token (0 = only the sampled token's). */
  logprobs?: number;
  /** Backend-specific body fields sent as is (vLLM extras: `top_k`, `min_p`, `include_stop_str_in_output`, …). */
  extra?: Record<string, unknown>;
}

export type FinishReason = 'stop' | 'length' | 'error' | 'other';

export interface TokenLogprob {
  token: string;
  logprob: number;
  /** Alternatives at this position, when requested. */
  top?: Array<{ token: string; logprob: number }>;
}

/** One sampled continuation. */
export interface Sample {
  text: string;
  finishReason: FinishReason;
  /** The stop string that ended generation, when the backend reports it. */
  stopReason?: string | null;
  /** The stop token that ended generation, when the backend names one (vLLM's integer `stop_reason`). */
  stopTokenId?: number;
  completionTokens: number;
  logprobs?: TokenLogprob[];
  /** Present and true when the simulated world wrote it (the sim server marks its replies). */
  simulated?: true;
}

/** Usage of one `generate` call (a fallback of n requests counts n calls). */
export interface Usage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * Something a backend did differently from what was asked, said out loud instead of silently:
 * `unsupported-setting` (a request field it ignored or served another way: `n`, `logprobs`,
 * `messages`, `extra`), `compatibility` (it served the request, with a caveat), `other`.
 */
export interface ModelWarning {
  type: 'unsupported-setting' | 'compatibility' | 'other';
  /** The request field or feature concerned: `n`, `logprobs`, `messages`, `extra`, … */
  feature: string;
  /** What happened, for a person. */
  details: string;
}

export interface GenerateResult {
  samples: Sample[];
  usage: Usage;
  /** Settings the backend could not honour, said out loud instead of silently dropped. */
  warnings: ModelWarning[];
  /** True when every sample came from the cache (no model call made; usage is then zero). */
  cached?: boolean;
}

/** Log-probability of a continuation given a prefix. */
export interface ScoreResult {
  /** Sum of token log-probabilities of the continuation. */
  logprob: number;
  tokens: TokenLogprob[];
  usage: Usage;
}

/** What a backend can do natively. Methods adapt (e.g. n separate requests) where it cannot. */
export interface Capabilities {
  /** n > 1 in one request (shared prefill). */
  n: boolean;
  logprobs: boolean;
  echo: boolean;
  /** Continue a final assistant message. */
  continueAssistant: boolean;
  /** `score()` is available. */
  score: boolean;
  /** `pool()` is available (vLLM `/pooling`, for discriminative PRMs). */
  pooling: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Skip the cache for this call. */
  noCache?: boolean;
}

/**
 * Which world a number came from: `real` (a model of the world), `tiny` (the project's tiny
 * networks trained on synthetic arithmetic, models/tiny) or `sim` (the simulator, src/sim).
 */
export type World = 'real' | 'tiny' | 'sim';

export interface LanguageModel {
  readonly specificationVersion: 'v1';
  /** Backend name: `openai`, `gguf`, `sim`. */
  readonly provider: string;
  readonly modelId: string;
  /** Which world the model is, where its backend knows (the registry's models say; default `real`). */
  readonly world?: World;
  /**
   * What serves this model, when the name alone does not say (HTTP backends: the endpoint base
   * URLs, sorted). Part of every cache key: answers of a same-named model elsewhere are not reused.
   */
  readonly origin?: string;
  readonly capabilities: Capabilities;
  /**
   * What the server says it serves under this name (HTTP backends: the stable fields of the
   * model's `GET /v1/models` entry on each endpoint), or undefined when it cannot say. Part of
   * every cache key beside `origin`: another model behind the same URL and name is another model.
   */
  fingerprint?(options?: CallOptions): Promise<string | undefined>;
  generate(request: GenerateRequest, options?: CallOptions): Promise<GenerateResult>;
  /** Log-probability of `continuation` after `prefix` (only where `capabilities.score`). */
  score?(prefix: string, continuation: string, options?: CallOptions): Promise<ScoreResult>;
  /** vLLM `/pooling`: one row of class probabilities per step tag (only where `capabilities.pooling`). */
  pool?(input: string, options?: CallOptions): Promise<{ data: number[][]; usage: Usage }>;
  /** Release sockets, native handles, flush caches. */
  close?(): Promise<void>;
}
