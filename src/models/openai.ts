import OpenAI from 'openai';
import { canonicalJson } from '../core/canonical-json.js';
import { ModelCallError, StepwiseError, UnsupportedCapabilityError } from '../core/errors.js';
import { requestStarted } from '../core/in-flight.js';
import type {
  CallOptions,
  Capabilities,
  ChatMessage,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  ModelWarning,
  Sample,
  ScoreResult,
  TokenLogprob,
  Usage,
} from '../core/model.js';
import { createRng, hashString, type Rng } from '../core/rng.js';
import type { BatchExchange } from './batch.js';
import { type Endpoint, EndpointPool } from './endpoints.js';
import { createKeepAliveFetch, type KeepAliveFetch } from './http-fetch.js';
import {
  type ChatLogprobs,
  ChatReply,
  type CompletionLogprobs,
  CompletionReply,
  checkReply,
  PoolingReply,
  ScoreReply,
} from './openai-api.js';
import {
  backoffDelay,
  classifyError,
  DEFAULT_RETRY_POLICY,
  type Failure,
  type FailureKind,
  type RetryPolicy,
  sleep,
} from './retry.js';
import { deriveSeed } from './seeds.js';
import {
  modelFingerprint,
  type ServerKind,
  serverInfoFromModels,
  serverKindFromReply,
} from './server-kind.js';

/** Settings of an OpenAI-compatible backend. */
export interface OpenAIModelOptions {
  /** Model name the server knows (`--served-model-name` in vLLM). */
  model: string;
  /** Base URL(s) ending in `/v1`; an array or a comma-separated list means several endpoints. */
  baseUrl: string | string[];
  /** API key; default `OPENAI_API_KEY`, or a dummy (local servers ignore it). */
  apiKey?: string;
  /** Requests in flight per endpoint (default 64). */
  concurrency?: number;
  /** Timeout of one HTTP request in ms (default 600,000: long generations on a busy server are slow). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 8). */
  maxRetries?: number;
  /** Backoff tuning (tests shorten it). */
  retry?: Partial<Omit<RetryPolicy, 'maxRetries'>>;
  /** Override declared capabilities (e.g. `{ n: false }` for a server known to lack it). */
  capabilities?: Partial<Capabilities>;
  /** Randomness for backoff jitter (seeded; default seeded from the process id and clock). */
  rng?: Rng;
  /**
   * Server family, which decides how a final assistant message is continued; `auto` (default)
   * asks `GET /v1/models` once per endpoint before the first such request.
   */
  serverKind?: ServerKind | 'auto';
  /**
   * Generate requests go through batch files instead of the servers: answered from a loaded
   * Batch API output file, or written to a Batch API input file (see `batch.ts`).
   */
  batch?: BatchExchange;
}

/** Running totals of one backend: what it cost and how often the servers misbehaved. */
export interface OpenAIStats {
  /** HTTP requests that got an answer (including errors answered by the server). */
  requests: number;
  /** Successful requests. */
  calls: number;
  retries: number;
  failures: Partial<Record<FailureKind, number>>;
  promptTokens: number;
  completionTokens: number;
}

/**
 * Failed requests in words: `0 failures`, or `3 failures (2 timeout, 1 server)` — the total
 * first, then each kind (a summary line must never print the object itself).
 */
export function failuresPhrase(failures: OpenAIStats['failures']): string {
  const kinds = Object.entries(failures).filter(([, n]) => (n ?? 0) > 0) as Array<[string, number]>;
  const total = kinds.reduce((a, [, n]) => a + n, 0);
  const word = total === 1 ? 'failure' : 'failures';
  return kinds.length === 0
    ? `0 ${word}`
    : `${total} ${word} (${kinds.map(([k, n]) => `${n} ${k}`).join(', ')})`;
}

/** Split a `--base-url` value (comma-separated) into endpoint URLs without trailing slashes. */
export function parseBaseUrls(baseUrl: string | string[]): string[] {
  const list = (Array.isArray(baseUrl) ? baseUrl : baseUrl.split(','))
    .map((u) => u.trim().replace(/\/+$/, ''))
    .filter((u) => u !== '');
  for (const u of list) {
    try {
      const parsed = new URL(u);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new StepwiseError(`invalid base URL "${u}": expected http(s)://host:port/v1`, { exitCode: 2 });
    }
  }
  if (list.length === 0)
    throw new StepwiseError('no base URL given (--base-url or OPENAI_BASE_URL)', { exitCode: 2 });
  return list;
}

/** vLLM serves `/pooling` at the server root, not under `/v1`. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

/** The context-overflow errors of vLLM ("maximum context length"), SGLang and llama.cpp ("exceeds the available context size"). */
const CONTEXT_OVERFLOW =
  /context length|context size|context window|exceed_context_size|too many tokens|longer than the model/i;

/** A chat request whose last message is an assistant message to continue. */
function continuesAssistant(request: GenerateRequest): boolean {
  return request.messages?.[request.messages.length - 1]?.role === 'assistant';
}

function mapFinish(reason: string | null | undefined): FinishReason {
  if (reason === 'stop' || reason === 'length') return reason;
  if (reason === 'error' || reason === 'abort') return 'error';
  return 'other';
}

function completionLogprobs(lp: CompletionLogprobs): TokenLogprob[] | undefined {
  if (lp && !lp.tokens && Array.isArray(lp.content)) return chatLogprobs(lp);
  if (!lp?.tokens) return undefined;
  return lp.tokens.map((token, i) => {
    const t: TokenLogprob = { token, logprob: lp.token_logprobs?.[i] ?? 0 };
    const top = lp.top_logprobs?.[i];
    if (top) t.top = Object.entries(top).map(([tk, logprob]) => ({ token: tk, logprob }));
    return t;
  });
}

function chatLogprobs(lp: ChatLogprobs | CompletionLogprobs): TokenLogprob[] | undefined {
  if (!lp?.content) return undefined;
  return lp.content.map((c) => ({
    token: c.token,
    logprob: c.logprob,
    ...(c.top_logprobs?.length
      ? { top: c.top_logprobs.map((x) => ({ token: x.token, logprob: x.logprob })) }
      : {}),
  }));
}

/**
 * Per-sample completion tokens. Servers report only the total for n > 1; unless token logprobs
 * give exact counts, the total is split in proportion to each sample's length in characters.
 */
function assignTokens(samples: Sample[], total: number | undefined): void {
  if (samples.every((s) => s.logprobs)) {
    for (const s of samples) s.completionTokens = s.logprobs!.length;
    return;
  }
  if (total === undefined) return;
  if (samples.length === 1) {
    samples[0].completionTokens = total;
    return;
  }
  const chars = samples.reduce((a, s) => a + s.text.length, 0);
  let left = total;
  samples.forEach((s, i) => {
    const share =
      i === samples.length - 1
        ? left
        : Math.round(chars > 0 ? (total * s.text.length) / chars : total / samples.length);
    s.completionTokens = Math.max(0, Math.min(left, share));
    left -= s.completionTokens;
  });
}

/** Characters per token assumed when llama.cpp's first choice is empty (no ratio to scale by). */
const FALLBACK_CHARS_PER_TOKEN = 4;

/**
 * Per-choice completion tokens on llama.cpp. With n > 1 its reply is the first choice's task
 * reply with the other choices appended (ggml-org/llama.cpp tools/server/server-context.cpp,
 * `handle_completions_impl`), so `usage.completion_tokens` counts the first choice alone. That
 * count is exact; a choice cut at `max_tokens` ran exactly that many; the others are estimated
 * at the first choice's tokens per character (token logprobs, when asked for, count them exactly).
 */
function assignLlamaCppTokens(samples: Sample[], firstTokens: number, maxTokens: number | undefined): void {
  if (samples.every((s) => s.logprobs)) {
    for (const s of samples) s.completionTokens = s.logprobs!.length;
    return;
  }
  const [first, ...rest] = samples;
  first.completionTokens = firstTokens;
  const perChar = first.text.length > 0 ? firstTokens / first.text.length : 1 / FALLBACK_CHARS_PER_TOKEN;
  for (const s of rest)
    s.completionTokens =
      s.finishReason === 'length' && maxTokens !== undefined
        ? maxTokens
        : Math.max(1, Math.round(s.text.length * perChar));
}

/**
 * llama.cpp's stops: `finish_reason` is `"stop"` for a stop string and for end of text alike.
 * Without stop strings a stop is end of text. With them the request asked `verbose: true`, and
 * `__verbose.stop_type` (`word` with `stopping_word`, `eos`, `limit`) names the stop of the
 * choice `__verbose.index` (tools/server/server-task.cpp, `to_json_non_oaicompat`); stepwise sends
 * such requests one sample at a time, so that is every choice.
 */
function readLlamaCppStops(samples: Sample[], reply: unknown, request: GenerateRequest): void {
  if (!request.stop?.length) {
    for (const s of samples) if (s.finishReason === 'stop' && s.stopReason === undefined) s.stopReason = null;
    return;
  }
  const verbose = (reply as { __verbose?: unknown } | null)?.__verbose as
    | { index?: unknown; stop_type?: unknown; stopping_word?: unknown }
    | undefined;
  if (typeof verbose !== 'object' || verbose === null) return;
  const index = typeof verbose.index === 'number' ? verbose.index : 0;
  const s = samples[index];
  if (s?.finishReason !== 'stop') return;
  if (verbose.stop_type === 'word' && typeof verbose.stopping_word === 'string')
    s.stopReason = verbose.stopping_word;
  else if (verbose.stop_type === 'eos') s.stopReason = null;
}

/**
 * An OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted APIs) as a
 * `LanguageModel`. The SDK's own retries are off: this class retries with backoff and jitter,
 * routes across endpoints and falls back to one request per sample where `n` is not honoured.
 */
export class OpenAIModel implements LanguageModel {
  readonly specificationVersion = 'v1' as const;
  readonly provider = 'openai';
  readonly modelId: string;
  /** The endpoint set (normalised base URLs, sorted): part of the cache key. */
  readonly origin: string;
  readonly capabilities: Capabilities;
  readonly endpoints: EndpointPool<OpenAI>;
  private readonly fetch: KeepAliveFetch;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly rng: Rng;
  private readonly apiKey: string;
  private readonly batch?: BatchExchange;
  private readonly serverKind: ServerKind | 'auto';
  /** Per endpoint URL: the family `GET /v1/models` named (asked once, on first need). */
  private readonly kinds = new Map<string, Promise<ServerKind>>();
  /** Per endpoint URL: the `GET /v1/models` reply (asked once; null when the server gave none). */
  private readonly modelLists = new Map<string, Promise<unknown>>();
  private served?: Promise<string | undefined>;
  private readonly totals: OpenAIStats = {
    requests: 0,
    calls: 0,
    retries: 0,
    failures: {},
    promptTokens: 0,
    completionTokens: 0,
  };

  constructor(options: OpenAIModelOptions) {
    this.modelId = options.model;
    const urls = parseBaseUrls(options.baseUrl);
    this.origin = [...new Set(urls)].sort().join(',');
    const concurrency = Math.max(1, options.concurrency ?? 64);
    this.fetch = createKeepAliveFetch({ maxSockets: concurrency + 8 });
    this.apiKey = options.apiKey ?? process.env.OPENAI_API_KEY ?? 'EMPTY';
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.policy = {
      ...DEFAULT_RETRY_POLICY,
      ...options.retry,
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
    };
    this.rng = options.rng ?? createRng(hashString(`${process.pid}:${Date.now()}`));
    this.serverKind = options.serverKind ?? 'auto';
    this.batch = options.batch;
    this.endpoints = new EndpointPool(
      urls,
      (url) =>
        new OpenAI({
          baseURL: url,
          apiKey: this.apiKey,
          maxRetries: 0,
          timeout: this.timeoutMs,
          fetch: this.fetch,
        }),
      { concurrency },
    );
    this.capabilities = {
      n: true,
      logprobs: true,
      echo: true,
      continueAssistant: true,
      score: true,
      pooling: true,
      ...options.capabilities,
    };
    if (this.capabilities.n === false) for (const e of this.endpoints.endpoints) e.nativeN = false;
  }

  /** Totals since creation. */
  stats(): OpenAIStats {
    return { ...this.totals, failures: { ...this.totals.failures } };
  }

  /**
   * Record an `n` the server could not honour, once per request's warnings (the registry's
   * warning sink says each once per model: `warnings.ts`).
   */
  private warn(details: string, warnings: ModelWarning[]): void {
    if (!warnings.some((w) => w.details === details))
      warnings.push({ type: 'unsupported-setting', feature: 'n', details });
  }

  /** A reply that does not have the shape the protocol promises: a typed error naming the field. */
  private invalidReply(what: string, url: string, problem: string): ModelCallError {
    return new ModelCallError(
      { provider: this.provider, model: this.modelId, url, kind: 'invalid-reply', retryable: false },
      `${what}: ${this.provider}:${this.modelId} at ${url} sent a malformed reply: ${problem}`,
    );
  }

  /**
   * Run `attempt` on an endpoint until it succeeds: retries retryable failures with backoff
   * (or the server's Retry-After), moves to another endpoint when one stops answering, and
   * turns the final failure into a StepwiseError that names the server and what happened.
   */
  private async withRetries<T>(
    what: string,
    attempt: (endpoint: Endpoint<OpenAI>) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    let last: Failure | undefined;
    let lastUrl = '';
    let attempts = 0;
    for (let retry = 0; ; ) {
      const endpoint = await this.endpoints.acquire(signal);
      let failure: Failure;
      // Noted for the progress display: what a stalled job waits on (core/in-flight).
      const settled = requestStarted(endpoint.url);
      try {
        const result = await attempt(endpoint);
        this.totals.requests++;
        this.endpoints.markAnswered(endpoint);
        return result;
      } catch (err) {
        failure = classifyError(err);
        if (failure.kind === 'abort' || signal?.aborted) throw signal?.reason ?? err;
        if (failure.kind === 'refused' || failure.kind === 'connection' || failure.kind === 'timeout') {
          this.endpoints.markConnectionFailure(endpoint, failure.kind === 'refused');
        } else {
          this.totals.requests++;
          this.endpoints.markAnswered(endpoint);
        }
      } finally {
        settled();
        this.endpoints.release(endpoint);
      }
      this.totals.failures[failure.kind] = (this.totals.failures[failure.kind] ?? 0) + 1;
      attempts++;
      last = failure;
      lastUrl = endpoint.url;
      if (!failure.retryable) break;
      // A server that has never answered and refuses connections is a wrong URL or not started.
      const neverAnswered = this.endpoints.endpoints.every((e) => !e.answered);
      if (failure.kind === 'refused' && neverAnswered && retry >= 2) break;
      if (retry >= this.policy.maxRetries) break;
      retry++;
      this.totals.retries++;
      const failover =
        (failure.kind === 'refused' || failure.kind === 'connection') && this.endpoints.anyAlive();
      const wait =
        failure.retryAfterMs !== undefined
          ? Math.min(failure.retryAfterMs, this.policy.maxRetryAfterMs)
          : failover && this.endpoints.endpoints.length > 1
            ? 0
            : backoffDelay(retry - 1, this.policy, this.rng);
      if (wait > 0) await sleep(wait, signal);
    }
    throw this.finalError(what, last!, lastUrl, attempts);
  }

  private finalError(what: string, f: Failure, url: string, attempts: number): ModelCallError {
    const where = `${this.provider}:${this.modelId} at ${url}`;
    const data = {
      provider: this.provider,
      model: this.modelId,
      url,
      kind: f.kind,
      ...(f.status !== undefined ? { status: f.status } : {}),
      retryable: f.retryable,
      attempts,
    };
    switch (f.kind) {
      case 'refused':
        return new ModelCallError(
          data,
          `cannot reach the server for ${where} (connection refused): is it running? Check --base-url / OPENAI_BASE_URL`,
        );
      case 'client':
        return new ModelCallError(
          data,
          `${what}: ${where} rejected the request${f.status ? ` (HTTP ${f.status})` : ''}: ${f.message}${
            f.status === 404
              ? ' (is the model name right? `GET /v1/models` lists what the server serves)'
              : CONTEXT_OVERFLOW.test(f.message)
                ? ' (the prompt plus --max-tokens do not fit the context the server gives one request: lower --max-tokens, shorten the input, or start the server with a longer context — llama.cpp: -c, divided among its -np slots; vLLM: --max-model-len)'
                : ''
          }`,
        );
      default:
        return new ModelCallError(
          data,
          `${what}: ${where} failed after ${attempts} attempt${attempts === 1 ? '' : 's'} (${f.kind}${
            f.status ? `, HTTP ${f.status}` : ''
          }): ${f.message}`,
        );
    }
  }

  private requestBody(
    request: GenerateRequest,
    n: number,
    seed: number | undefined,
    kind: ServerKind,
  ): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.modelId };
    if (request.messages) {
      body.messages = request.messages;
      // vLLM and SGLang continue a final assistant message only when asked to; llama.cpp and
      // Ollama always do (prefill) and have no such fields.
      if (continuesAssistant(request) && kind !== 'llama.cpp' && kind !== 'ollama') {
        body.continue_final_message = true;
        body.add_generation_prompt = false;
      }
      if (request.logprobs !== undefined) {
        body.logprobs = true;
        if (request.logprobs > 0) body.top_logprobs = request.logprobs;
      }
    } else {
      body.prompt = request.prompt;
      if (request.logprobs !== undefined) body.logprobs = request.logprobs;
    }
    if (n > 1) body.n = n;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.stop?.length) {
      body.stop = request.stop;
      // llama.cpp says which stop ended a choice only in its debug block (see readLlamaCppStops).
      if (kind === 'llama.cpp') body.verbose = true;
    }
    if (seed !== undefined) body.seed = seed;
    if (request.extra) Object.assign(body, request.extra);
    return body;
  }

  /** An endpoint's `GET /v1/models` reply, asked once (null when it failed). */
  private modelList(endpoint: Endpoint<OpenAI>, signal: AbortSignal | undefined): Promise<unknown> {
    let list = this.modelLists.get(endpoint.url);
    if (!list) {
      // Noted as in flight like any request: a job stalled on a hung server's model list says so.
      const settled = requestStarted(endpoint.url);
      list = (
        endpoint.client.get('/models', {
          signal,
          timeout: Math.min(this.timeoutMs, 30_000),
        }) as Promise<unknown>
      )
        .catch(() => null)
        .finally(settled);
      this.modelLists.set(endpoint.url, list);
    }
    return list;
  }

  /** The server family of an endpoint: configured, or asked of `GET /v1/models` once. */
  private kindOf(endpoint: Endpoint<OpenAI>, signal: AbortSignal | undefined): Promise<ServerKind> {
    if (this.serverKind !== 'auto') return Promise.resolve(this.serverKind);
    let kind = this.kinds.get(endpoint.url);
    if (!kind) {
      kind = this.modelList(endpoint, signal).then((reply) =>
        reply === null ? ('unknown' as const) : serverInfoFromModels(reply).kind,
      );
      this.kinds.set(endpoint.url, kind);
    }
    return kind;
  }

  /**
   * What the endpoints say they serve under this model's name (see `modelFingerprint`), asked
   * once per process: endpoint URL → fingerprint, as canonical JSON. Undefined when no endpoint
   * answers `GET /v1/models` with this model (the endpoint set alone then keys the cache).
   */
  fingerprint(options: CallOptions = {}): Promise<string | undefined> {
    this.served ??= Promise.all(
      this.endpoints.endpoints.map(async (e) => {
        const reply = await this.modelList(e, options.signal);
        return [e.url, reply === null ? null : modelFingerprint(reply, this.modelId)] as const;
      }),
    ).then((pairs) =>
      pairs.some(([, fp]) => fp !== null) ? canonicalJson(Object.fromEntries(pairs)) : undefined,
    );
    return this.served;
  }

  /**
   * Why a server cannot serve n > 1 choices of this request in one request, or undefined when it
   * can. llama.cpp answers an n-choice request with its first task's reply plus the other tasks'
   * choices (ggml-org/llama.cpp tools/server/server-context.cpp, `handle_completions_impl`): its
   * `__verbose.stop_type` names the first choice's stop only, so with stop strings the other
   * choices' stops (a stop string or end of text?) would be unknown. SGLang hands every choice the
   * request's one `seed` (`sampling_seed` in serving_completions.py `_build_sampling_params`), so
   * under `--enable-deterministic-inference` the n choices are the same text. Such requests go
   * out one per sample (each its own derived seed), concurrently; SGLang's prefix cache and
   * llama.cpp's slots keep that cheap.
   */
  private splitReason(kind: ServerKind, request: GenerateRequest): string | undefined {
    if (kind === 'llama.cpp' && request.stop?.length)
      return 'llama.cpp names the stop of the first choice only';
    if (kind === 'sglang' && request.seed !== undefined) return 'SGLang gives all n choices one seed';
    return undefined;
  }

  /** Whether the server family matters for this request (continuation, stops, seeded n). */
  private needsKind(request: GenerateRequest, want: number): boolean {
    return (
      continuesAssistant(request) ||
      (request.stop?.length ?? 0) > 0 ||
      (want > 1 && request.seed !== undefined && request.temperature !== 0)
    );
  }

  /**
   * llama.cpp's slot count (`GET /props` → `total_slots`, at the server root), the most choices
   * one request may ask for (its `n` has the hard limit `n_parallel`, server-schema.cpp).
   */
  private async llamaCppSlots(
    endpoint: Endpoint<OpenAI>,
    signal: AbortSignal | undefined,
  ): Promise<number | undefined> {
    try {
      const props = (await endpoint.client.get(`${serverRoot(endpoint.url)}/props`, {
        signal,
        timeout: Math.min(this.timeoutMs, 30_000),
      })) as { total_slots?: unknown } | null;
      const slots = props?.total_slots;
      return typeof slots === 'number' && Number.isInteger(slots) && slots >= 1 ? slots : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * How many samples each request of the next round should ask for: `want`, unless every endpoint
   * is known to take fewer (n = 1 servers, llama.cpp's slot count) or the request is one the
   * server family must get one sample at a time ({@link splitReason}).
   */
  private async roundSize(
    request: GenerateRequest,
    want: number,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    if (this.batch || want === 1) return want;
    if (request.temperature === 0) return 1;
    if (this.needsKind(request, want)) {
      const kinds = await Promise.all(this.endpoints.endpoints.map((e) => this.kindOf(e, signal)));
      if (kinds.some((k) => this.splitReason(k, request))) return 1;
    }
    const caps = this.endpoints.endpoints.map((e) => (e.nativeN === false ? 1 : (e.maxN ?? want)));
    return Math.max(1, Math.min(want, Math.max(...caps)));
  }

  /**
   * One HTTP request for up to `want` samples starting at sample `offset`.
   *
   * n > 1 is found out by probing, never from an error's wording: while an endpoint's support is
   * unknown one request probes it and the others wait. When that request fails with a status that
   * is not worth retrying (4xx), or with a 5xx, a llama.cpp server is asked its slot count and, if
   * that is below n, the request goes again with n = the slots (the endpoint is capped there, not
   * downgraded); otherwise it is sent again at once with n = 1 and, if that succeeds, the endpoint
   * is marked n = 1 for good. A 5xx after n > 1 has worked once is a plain server error. Greedy
   * requests (temperature 0) always go out with n = 1 — vLLM refuses n > 1 for them — and say
   * nothing about the endpoint.
   */
  private async requestSamples(
    request: GenerateRequest,
    want: number,
    offset: number,
    signal: AbortSignal | undefined,
    warnings: ModelWarning[],
  ): Promise<{
    samples: Sample[];
    usage: Usage;
    asked: number;
    endpoint: Endpoint<OpenAI>;
    /** One sample was asked on purpose (a server limit or {@link splitReason}), not for lack of n. */
    limited: boolean;
  }> {
    let used!: Endpoint<OpenAI>;
    let asked = want;
    let limited = false;
    let kind: ServerKind = 'unknown';
    const chat = request.messages !== undefined;
    const greedy = request.temperature === 0;
    // A batch engine honours n: the request asks for every sample at once.
    const reply = this.batch
      ? this.batchReply(chat, request, want, offset, (e) => {
          used = e;
        })
      : await this.withRetries(
          chat ? 'chat completion' : 'completion',
          async (endpoint) => {
            used = endpoint;
            if (this.needsKind(request, want)) kind = await this.kindOf(endpoint, signal);
            const send = (n: number): Promise<unknown> => {
              const body = this.requestBody(request, n, deriveSeed(request.seed, offset), kind);
              const opts = { signal, timeout: this.timeoutMs };
              return (
                chat
                  ? endpoint.client.chat.completions.create(
                      body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
                      opts,
                    )
                  : endpoint.client.completions.create(
                      body as unknown as OpenAI.CompletionCreateParamsNonStreaming,
                      opts,
                    )
              ) as Promise<unknown>;
            };
            const split = this.splitReason(kind, request) !== undefined;
            const single = (): boolean =>
              greedy || want === 1 || endpoint.nativeN === false || split || endpoint.maxN === 1;
            while (!single() && endpoint.nativeN === undefined && endpoint.nProbe) await endpoint.nProbe;
            asked = single() ? 1 : Math.min(want, endpoint.maxN ?? want);
            limited = split || (endpoint.maxN !== undefined && asked === endpoint.maxN);
            if (asked === 1) return send(1);
            let endProbe: (() => void) | undefined;
            if (endpoint.nativeN === undefined)
              endpoint.nProbe = new Promise<void>((resolve) => {
                endProbe = resolve;
              });
            try {
              const answer = await send(asked);
              const choices = (answer as { choices?: unknown } | null)?.choices;
              const count = Array.isArray(choices) ? choices.length : 0;
              // A server that ignores n answers one choice (Ollama); generate() says so.
              if (count > 0) endpoint.nativeN = count >= asked || (endpoint.nativeN === true && count > 1);
              return answer;
            } catch (err) {
              const failure = classifyError(err);
              const probe =
                endpoint.nativeN !== true &&
                failure.status !== undefined &&
                (failure.kind === 'client' || failure.kind === 'server');
              if (!probe) throw err;
              this.totals.requests++;
              this.totals.failures[failure.kind] = (this.totals.failures[failure.kind] ?? 0) + 1;
              // llama.cpp takes n up to its slot count: cap there instead of giving n up.
              const slots =
                failure.kind === 'client' && (await this.kindOf(endpoint, signal)) === 'llama.cpp'
                  ? await this.llamaCppSlots(endpoint, signal)
                  : undefined;
              if (slots !== undefined && slots > 1 && slots < asked) {
                const answer = await send(slots);
                endpoint.maxN = slots;
                endpoint.nativeN = true;
                asked = slots;
                limited = true;
                this.warn(
                  `${endpoint.url} (llama.cpp) serves at most n = ${slots} per request (its slot count, -np): ` +
                    `n = ${want} goes out as requests of ${slots}`,
                  warnings,
                );
                return answer;
              }
              const answer = await send(1);
              endpoint.nativeN = false;
              asked = 1;
              this.warn(
                `${endpoint.url} rejected n = ${want} (HTTP ${failure.status}: ${failure.message.slice(0, 120)}) and ` +
                  'answered n = 1: sending one request per sample from now on',
                warnings,
              );
              return answer;
            } finally {
              if (endProbe) {
                endpoint.nProbe = undefined;
                endProbe();
              }
            }
          },
          signal,
        );
    const checked = chat ? checkReply(ChatReply, reply) : checkReply(CompletionReply, reply);
    if (!checked.ok)
      throw this.invalidReply(chat ? 'chat completion' : 'completion', used.url, checked.problem);
    const raw = checked.value;
    if (kind === 'unknown') kind = serverKindFromReply(reply);
    const choices = (
      raw.choices as Array<Partial<ChatReply['choices'][number] & CompletionReply['choices'][number]>>
    )
      .slice()
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    // `stepwise sim serve` marks its replies: what it wrote is simulated, whatever the spec's name.
    const simulated = raw.simulated === true;
    const samples: Sample[] = choices.map((c) => {
      const s: Sample = {
        text: chat ? (c.message?.content ?? '') : (c.text ?? ''),
        finishReason: mapFinish(c.finish_reason),
        completionTokens: 0,
        ...(simulated ? { simulated: true as const } : {}),
      };
      const stop = c.stop_reason !== undefined ? c.stop_reason : c.matched_stop;
      if (typeof stop === 'string') s.stopReason = stop;
      else if (typeof stop === 'number') {
        // A stop token id (vLLM: e.g. an extra EOS id of the model's generation config), not a stop string.
        s.stopReason = null;
        s.stopTokenId = stop;
      } else if (stop === null && s.finishReason === 'stop') s.stopReason = null;
      const lp = chat ? chatLogprobs(c.logprobs) : completionLogprobs(c.logprobs as CompletionLogprobs);
      if (lp) s.logprobs = lp;
      return s;
    });
    if (kind === 'llama.cpp' && continuesAssistant(request))
      this.stripPrefill(samples, request.messages!, used.url);
    let completionTokens = raw.usage?.completion_tokens ?? undefined;
    if (kind === 'llama.cpp') {
      readLlamaCppStops(samples, reply, request);
      if (samples.length > 1 && completionTokens !== undefined) {
        assignLlamaCppTokens(samples, completionTokens, request.maxTokens);
        completionTokens = samples.reduce((a, s) => a + s.completionTokens, 0);
      }
    }
    if (kind !== 'llama.cpp' || samples.length <= 1) assignTokens(samples, completionTokens);
    const usage: Usage = {
      calls: 1,
      promptTokens: raw.usage?.prompt_tokens ?? 0,
      completionTokens: completionTokens ?? samples.reduce((a, s) => a + s.completionTokens, 0),
    };
    return { samples, usage, asked, endpoint: used, limited };
  }

  /**
   * llama.cpp continues a final assistant message (prefill) and returns the prefill followed by
   * the continuation as `message.content`: cut the prefill off. A reply that does not start with
   * it came from a server that started a new turn instead (builds before prefill, or
   * `--no-prefill-assistant`): its text is no continuation, so it is an error, not a sample.
   */
  private stripPrefill(samples: Sample[], messages: ChatMessage[], url: string): void {
    const prefill = messages[messages.length - 1].content;
    for (const s of samples) {
      if (s.text.startsWith(prefill)) s.text = s.text.slice(prefill.length);
      else
        throw new UnsupportedCapabilityError(
          { provider: this.provider, model: this.modelId, capability: 'continueAssistant' },
          `${this.provider}:${this.modelId} at ${url} (llama.cpp) did not continue the assistant message: its reply ` +
            'does not begin with the prefilled text, so the server started a new turn (a build without assistant ' +
            'prefill, or --no-prefill-assistant). Use --prompt-form raw, or a llama.cpp build that prefills.',
        );
    }
  }

  /** The answer to one request from the batch files (throws BatchPending when it has none yet). */
  private batchReply(
    chat: boolean,
    request: GenerateRequest,
    want: number,
    offset: number,
    use: (e: Endpoint<OpenAI>) => void,
  ): unknown {
    use(this.endpoints.endpoints[0]);
    // Batch files are run by an engine such as `vllm run-batch`: bodies as vLLM takes them,
    // unless the server family was set.
    const kind: ServerKind = this.serverKind === 'auto' ? 'vllm' : this.serverKind;
    const body = this.requestBody(request, want, deriveSeed(request.seed, offset), kind);
    const reply = this.batch!.exchange(chat ? '/v1/chat/completions' : '/v1/completions', body);
    this.totals.requests++;
    return reply;
  }

  async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
    if ((request.prompt === undefined) === (request.messages === undefined))
      throw new StepwiseError('a generate request needs exactly one of `prompt` or `messages`');
    const n = Math.max(1, request.n ?? 1);
    const samples: Sample[] = [];
    const usage: Usage = { calls: 0, promptTokens: 0, completionTokens: 0 };
    const warnings: ModelWarning[] = [];
    let emptyReplies = 0;
    // The lowest offset no request has used yet: a request's seed is derived from its offset, so
    // no two requests of one call share one (samples.length, unless a round ran in parts).
    let next = 0;
    while (samples.length < n) {
      const want = n - samples.length;
      const start = Math.max(next, samples.length);
      // Requests a server must get in parts (its limit, or one sample each) go out concurrently.
      const size = await this.roundSize(request, want, options.signal);
      const parts: Array<{ offset: number; count: number }> = [];
      for (let o = 0; o < want; o += size) parts.push({ offset: start + o, count: Math.min(size, want - o) });
      next = start + (parts.length > 1 ? parts[parts.length - 1].offset - start + 1 : 1);
      const replies = await Promise.all(
        parts.map((p) => this.requestSamples(request, p.count, p.offset, options.signal, warnings)),
      );
      for (const [i, reply] of replies.entries()) {
        const part = parts[i];
        usage.calls += 1;
        usage.promptTokens += reply.usage.promptTokens;
        usage.completionTokens += reply.usage.completionTokens;
        this.totals.calls++;
        this.totals.promptTokens += reply.usage.promptTokens;
        this.totals.completionTokens += reply.usage.completionTokens;
        if (reply.samples.length === 0) {
          if (++emptyReplies >= 3)
            throw new ModelCallError(
              {
                provider: this.provider,
                model: this.modelId,
                url: reply.endpoint.url,
                kind: 'invalid-reply',
                retryable: false,
                attempts: emptyReplies,
              },
              `${this.provider}:${this.modelId} at ${reply.endpoint.url} returned no choices (${emptyReplies} replies in a row)`,
            );
          continue;
        }
        if (reply.asked > 1 && reply.samples.length < reply.asked && reply.endpoint.nativeN === false)
          this.warn(
            `${reply.endpoint.url} returned ${reply.samples.length} of n=${reply.asked} choices: sending one request per sample`,
            warnings,
          );
        if (reply.asked === 1 && part.count > 1 && request.temperature !== 0 && !reply.limited)
          this.warn(`${reply.endpoint.url} does not support n > 1: sent one request per sample`, warnings);
        samples.push(...reply.samples.slice(0, Math.min(part.count, n - samples.length)));
      }
    }
    return { samples, usage, warnings };
  }

  /**
   * Log-probability of `continuation` after `prefix`, from the completions endpoint with
   * `echo` and `logprobs` (vLLM). Tokens are counted as continuation when they end after the
   * prefix (a token straddling the boundary counts as continuation).
   */
  async score(prefix: string, continuation: string, options: CallOptions = {}): Promise<ScoreResult> {
    const text = prefix + continuation;
    let url = '';
    const answer = await this.withRetries(
      'score',
      (endpoint) => {
        url = endpoint.url;
        return endpoint.client.completions.create(
          {
            model: this.modelId,
            prompt: text,
            max_tokens: 1,
            temperature: 0,
            echo: true,
            logprobs: 0,
          },
          { signal: options.signal, timeout: this.timeoutMs },
        ) as Promise<unknown>;
      },
      options.signal,
    );
    const checked = checkReply(ScoreReply, answer);
    if (!checked.ok)
      throw new UnsupportedCapabilityError(
        { provider: this.provider, model: this.modelId, capability: 'score' },
        `${this.provider}:${this.modelId} at ${url}: the server did not return echoed prompt logprobs (score needs echo + logprobs): ${checked.problem}`,
      );
    const reply = checked.value;
    const lp = reply.choices[0]!.logprobs;
    // vLLM counts offsets over the decoded prompt tokens from 0, BOS included: the echoed prompt is
    // then longer than `text` by the BOS text, and every offset is shifted by that much.
    const reported = reply.usage?.prompt_tokens;
    const promptCount =
      reported !== undefined && reported > 0 && reported <= lp.tokens.length
        ? reported
        : lp.tokens.length - 1;
    const offsets = this.echoOffsets(lp, promptCount, text, url);
    const promptEnd = promptCount > 0 ? offsets[promptCount - 1] + lp.tokens[promptCount - 1].length : 0;
    const shift = Math.max(0, promptEnd - text.length);
    const tokens: TokenLogprob[] = [];
    for (let i = 0; i < promptCount; i++) {
      const start = offsets[i] - shift;
      const end = start + lp.tokens[i].length;
      if (start >= text.length) break;
      if (end > prefix.length && lp.token_logprobs[i] !== null)
        tokens.push({ token: lp.tokens[i], logprob: lp.token_logprobs[i] as number });
    }
    this.totals.calls++;
    return {
      logprob: tokens.reduce((a, t) => a + t.logprob, 0),
      tokens,
      usage: { calls: 1, promptTokens: reply.usage?.prompt_tokens ?? 0, completionTokens: 0 },
    };
  }

  /**
   * Where each echoed prompt token starts in the echoed text. vLLM reports it (`text_offset`);
   * SGLang always sends −1 (entrypoints/openai/utils.py `to_openai_style_logprobs`: "Not supported
   * yet"), and read as offsets those would put every token before the prefix — a score of 0 from
   * no tokens. Then the offsets are the running lengths of the token texts, used only when those
   * texts spell the text sent (after whatever the server put before it, e.g. BOS); otherwise the
   * boundary between prefix and continuation cannot be found and score() refuses.
   */
  private echoOffsets(
    lp: { tokens: string[]; text_offset: number[] },
    promptCount: number,
    text: string,
    url: string,
  ): number[] {
    const given = lp.text_offset.slice(0, promptCount);
    if (given.length === promptCount && given.every((o, i) => o >= 0 && (i === 0 || o >= given[i - 1])))
      return lp.text_offset;
    const offsets: number[] = [];
    let at = 0;
    for (const t of lp.tokens) {
      offsets.push(at);
      at += t.length;
    }
    const echoed = lp.tokens.slice(0, promptCount).join('');
    if (!echoed.endsWith(text))
      throw new UnsupportedCapabilityError(
        { provider: this.provider, model: this.modelId, capability: 'score' },
        `${this.provider}:${this.modelId} at ${url}: the echoed prompt tokens carry no text offsets (text_offset −1, as ` +
          "SGLang sends) and their texts do not spell the prompt sent, so the continuation's tokens cannot be told from " +
          "the prefix's: score() needs vLLM's echo, or use a judge's logprobs method (shepherd: method 'logprobs')",
      );
    return offsets;
  }

  /** vLLM `/pooling` (served at the server root): one row of class probabilities per step tag. */
  async pool(input: string, options: CallOptions = {}): Promise<{ data: number[][]; usage: Usage }> {
    let url = '';
    const answer = await this.withRetries(
      'pooling',
      (endpoint) => {
        url = endpoint.url;
        return endpoint.client.post(`${serverRoot(endpoint.url)}/pooling`, {
          body: { model: this.modelId, input },
          signal: options.signal,
          timeout: this.timeoutMs,
        }) as Promise<unknown>;
      },
      options.signal,
    );
    const checked = checkReply(PoolingReply, answer);
    if (!checked.ok) throw this.invalidReply('pooling', url, checked.problem);
    const reply = checked.value;
    const rows = reply.data[0]!.data;
    // A single-step input may come back as one flat row.
    const data = (rows.length > 0 && !Array.isArray(rows[0]) ? [rows] : rows) as number[][];
    this.totals.calls++;
    return { data, usage: { calls: 1, promptTokens: reply.usage?.prompt_tokens ?? 0, completionTokens: 0 } };
  }

  async close(): Promise<void> {
    this.endpoints.rejectWaiters(new StepwiseError('model closed'));
    this.fetch.destroy();
  }
}
