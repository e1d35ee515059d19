import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StepwiseError } from '../core/errors.js';
import {
  allowedHostNames,
  applyServerLimits,
  checkHost,
  HttpError,
  isLoopbackHost,
  listenOrExplain,
  readBody,
  requireJsonBody,
  sameToken,
  sendJson,
} from '../core/http.js';
import type { ChatMessage, GenerateRequest, Sample } from '../core/model.js';
import { createRng } from '../core/rng.js';
import type { PromptReaders } from '../prompts/protocol.js';
import {
  createSeedStream,
  type SimGenerateResult,
  type SimRole,
  simGenerateSteps,
  simPool,
} from './model.js';
import { parseSimSpec, resolveSimOptions, type SimOptions } from './options.js';

/**
 * The simulated world behind an OpenAI-compatible HTTP server (raw node:http, so the server is
 * never the bottleneck of a client benchmark): `/v1/completions`, `/v1/chat/completions`
 * (continue_final_message), `/pooling`, `/v1/models`, `/metrics`, with latency and fault
 * injection. Usage in every response is exactly what `/metrics` counts.
 */

export interface SimServerOptions extends Partial<SimOptions> {
  /** What tells the server what a request is (`PROMPT_READERS` of src/prompts). */
  readers: PromptReaders;
  /** Port (0 = a free one). Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay before every answer (ms). Default 0. */
  latencyMs?: number;
  /** Share of model requests answered with HTTP 500 (drawn from the seed). Default 0. */
  failRate?: number;
  /** A spec (`sim?sensitivity=0.8`) applied on top of the other options. */
  spec?: string;
  /**
   * Required for a non-loopback host: requests must then send `Authorization: Bearer <token>`
   * (what OpenAI clients send as their API key).
   */
  token?: string;
}

/** Requests and tokens of one endpoint or role. */
export interface SimCounter {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  samples: number;
}

/** What `/metrics` returns. Only answered (HTTP 200) model requests are counted in `requests` and tokens. */
export interface SimServerMetrics {
  simulated: true;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  samples: number;
  /** By path: `/v1/completions`, `/v1/chat/completions`, `/pooling`. */
  byEndpoint: Record<string, SimCounter>;
  /** By the simulated model that answered: policy, refine, judge, critic, orm, prm (one count per prompt). */
  byRole: Partial<Record<SimRole, SimCounter>>;
  /** Requests answered with an injected HTTP 500 (not counted above). */
  injectedFailures: number;
  /** Requests rejected as malformed (HTTP 4xx; not counted above). */
  badRequests: number;
}

export interface SimServer {
  /** Root URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** OpenAI base URL: `${url}/v1`. */
  baseURL: string;
  port: number;
  options: Readonly<SimOptions>;
  metrics(): SimServerMetrics;
  resetMetrics(): void;
  close(): Promise<void>;
}

function emptyCounter(): SimCounter {
  return { requests: 0, promptTokens: 0, completionTokens: 0, samples: 0 };
}

function emptyMetrics(): SimServerMetrics {
  return {
    simulated: true,
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    samples: 0,
    byEndpoint: {},
    byRole: {},
    injectedFailures: 0,
    badRequests: 0,
  };
}

function errorBody(status: number, message: string): unknown {
  const type =
    status === 500
      ? 'InternalServerError'
      : status === 404
        ? 'NotFoundError'
        : status === 401
          ? 'AuthenticationError'
          : status === 403
            ? 'PermissionDeniedError'
            : 'BadRequestError';
  return { object: 'error', error: { message, type, code: status }, message, type, code: status };
}

/** Largest request body: the reward service's cap (32 MiB), far above any simulated request. */
export const SIM_MAX_BODY_BYTES = 32 * 1024 * 1024;
/**
 * Per-request limits. A 378-byte request with n = 400,000 once took 8 s, a 287 MB reply and
 * 2.5 GB of memory; these keep one request's work bounded and are far above what stepwise sends
 * (rollouts per prefix, best-of-N, beam widths are tens to hundreds).
 */
export const SIM_LIMITS = {
  /** Samples per prompt (`n`). */
  n: 2048,
  /** `max_tokens` / `max_completion_tokens`. */
  maxTokens: 32768,
  /** Prompts in one `/v1/completions` request, or inputs in one `/pooling` request. */
  prompts: 4096,
  /** Samples in one reply (prompts × n). */
  samples: 8192,
  /**
   * Characters of one prompt, one chat request's messages or one pooling input. What the world
   * reads grows with it (a policy prompt's prefix, a judge's history); the world's own prompts are
   * a few KB.
   */
  promptChars: 1 << 20,
  /**
   * Characters of text in one reply, all samples together: a 1,000-operation question asked with
   * n = 2048 would otherwise write gigabytes (and the garbage of writing 32 MB held the server
   * for a third of a second under load). 8,192 samples of the world's longest questions (40
   * operations) write about 17 MB. Answered 413 when passed.
   */
  replyChars: 24 << 20,
} as const;

/**
 * Longest stretch (ms) the server computes one request before it lets others in (health,
 * metrics, SIGTERM): heavy requests are drawn in slices of about this length.
 */
export const SIM_SLICE_MS = 20;

/** 413 unless `text` (what is named by `what`) is within {@link SIM_LIMITS.promptChars}. */
function checkPromptSize(text: string, what: string): void {
  if (text.length > SIM_LIMITS.promptChars)
    throw new HttpError(
      413,
      `${what} is ${text.length} characters; the sim server reads at most ${SIM_LIMITS.promptChars} per prompt`,
    );
}

/** An integer option in [min, max]; 400 naming the limit otherwise. */
function boundedInt(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const v = optionalInt(body, key);
  if (v !== undefined && (v < min || v > max))
    throw new HttpError(400, `${key} must be between ${min} and ${max} on the sim server (got ${v})`);
  return v;
}

function optionalInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new HttpError(400, `${key} must be an integer`);
  return v;
}

function optionalNumber(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new HttpError(400, `${key} must be a number`);
  return v;
}

function stopList(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  throw new HttpError(400, 'stop must be a string or a list of strings');
}

/** The sampling fields shared by both generation endpoints. */
function samplingOf(body: Record<string, unknown>): Omit<GenerateRequest, 'prompt' | 'messages'> {
  if (body.echo === true) throw new HttpError(400, 'echo is not supported by the sim server');
  if (body.stream === true) throw new HttpError(400, 'stream is not supported by the sim server');
  const logprobs = body.logprobs;
  const wantsLogprobs = logprobs !== undefined && logprobs !== null && logprobs !== false;
  return {
    n: boundedInt(body, 'n', 1, SIM_LIMITS.n),
    temperature: optionalNumber(body, 'temperature'),
    topP: optionalNumber(body, 'top_p'),
    maxTokens:
      boundedInt(body, 'max_tokens', 0, SIM_LIMITS.maxTokens) ??
      boundedInt(body, 'max_completion_tokens', 0, SIM_LIMITS.maxTokens),
    stop: stopList(body.stop),
    seed: optionalInt(body, 'seed'),
    logprobs: wantsLogprobs ? 0 : undefined,
    extra: body.include_stop_str_in_output === true ? { include_stop_str_in_output: true } : undefined,
  };
}

function choiceFinish(s: Sample): { finish_reason: string; stop_reason: string | null } {
  return {
    finish_reason: s.finishReason === 'length' ? 'length' : 'stop',
    stop_reason: s.stopReason ?? null,
  };
}

/**
 * Start the simulated world's server. Resolves once it listens. Per-request world options ride in
 * the `model` field (`sim?sensitivity=0.8`), applied on top of the server's options.
 */
export async function startSimServer(options: SimServerOptions): Promise<SimServer> {
  const {
    readers,
    port = 0,
    host = '127.0.0.1',
    latencyMs = 0,
    failRate = 0,
    spec,
    token,
    ...world
  } = options;
  if (!isLoopbackHost(host) && !token)
    throw new StepwiseError(
      `sim serve: refusing to serve on ${host} without a token: pass --token-file (or STEPWISE_TOKEN), or bind 127.0.0.1`,
      { exitCode: 2 },
    );
  const hosts = allowedHostNames(host);
  if (!(failRate >= 0 && failRate <= 1)) throw new StepwiseError('sim serve: fail rate must be in [0, 1]');
  if (!(latencyMs >= 0)) throw new StepwiseError('sim serve: latency must be ≥ 0 ms');
  let base = resolveSimOptions(world);
  if (spec) base = parseSimSpec(spec, base).options;
  if (base.prmTarget === 'oracle')
    throw new StepwiseError(
      'sim serve: the oracle PRM (prm=oracle) reads exact values; it is not served world-wide. Name it in the ' +
        'model of each request (e.g. --judge prm:openai:sim?prm=oracle), so every run that uses it says so',
      { exitCode: 2 },
    );
  const serverOptions = base;
  const optionsByModel = new Map<string, SimOptions>();
  const modelOptions = (model: unknown): SimOptions => {
    if (model === undefined || model === null || model === '' || model === 'sim') return serverOptions;
    if (typeof model !== 'string') throw new HttpError(400, 'model must be a string');
    let o = optionsByModel.get(model);
    if (!o) {
      try {
        o = parseSimSpec(model, serverOptions).options;
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
      if (optionsByModel.size > 1000) optionsByModel.clear();
      optionsByModel.set(model, o);
    }
    return o;
  };
  const stream = createSeedStream(`server:${serverOptions.seed}`);
  const faults = createRng(`sim-faults:${serverOptions.seed}`);
  let metrics = emptyMetrics();
  let ids = 0;

  const count = (endpoint: string, prompt: number, completion: number, samples: number): void => {
    metrics.requests++;
    metrics.promptTokens += prompt;
    metrics.completionTokens += completion;
    metrics.samples += samples;
    let c = metrics.byEndpoint[endpoint];
    if (!c) {
      c = emptyCounter();
      metrics.byEndpoint[endpoint] = c;
    }
    c.requests++;
    c.promptTokens += prompt;
    c.completionTokens += completion;
    c.samples += samples;
  };
  const countRole = (role: SimRole, prompt: number, completion: number, samples: number): void => {
    let c = metrics.byRole[role];
    if (!c) {
      c = emptyCounter();
      metrics.byRole[role] = c;
    }
    c.requests++;
    c.promptTokens += prompt;
    c.completionTokens += completion;
    c.samples += samples;
  };

  /**
   * Model requests are answered one at a time, in the order their bodies arrived (as when each
   * was computed whole: the seed stream's draws stay in that order), each drawn in slices of
   * about SIM_SLICE_MS between which the server answers health, metrics and other sockets.
   */
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  let closing = false;
  let sliceStart = performance.now();
  /** Let the event loop turn when this slice has run long enough; stop the work once the server closes. */
  const breathe = async (): Promise<void> => {
    if (performance.now() - sliceStart < SIM_SLICE_MS) return;
    await new Promise((next) => setImmediate(next));
    sliceStart = performance.now();
    if (closing) throw new HttpError(503, 'the sim server is shutting down');
  };

  /**
   * One generate request, drawn a sample at a time. `reply` counts the text written so far for
   * the whole reply and the samples it will hold (`expected`): past the cap it is a 413, and so is
   * a reply whose samples so far project to twice the cap (refused early, before writing megabytes
   * only to drop them).
   */
  const run = async (
    req: GenerateRequest,
    o: SimOptions,
    reply: { chars: number; samples: number; expected: number },
  ): Promise<SimGenerateResult> => {
    const tooLarge = (what: string) =>
      new HttpError(
        413,
        `the reply ${what} ${SIM_LIMITS.replyChars} characters of text on the sim server: ask for fewer samples (n), fewer prompts or fewer max_tokens`,
      );
    try {
      const steps = simGenerateSteps(o, readers, req, stream);
      for (;;) {
        const step = steps.next();
        if (step.done) return step.value;
        reply.chars += step.value.text.length;
        reply.samples++;
        if (reply.chars > SIM_LIMITS.replyChars) throw tooLarge('would pass');
        if (reply.samples >= 8 && (reply.chars / reply.samples) * reply.expected > 2 * SIM_LIMITS.replyChars)
          throw tooLarge('would be about twice');
        await breathe();
      }
    } catch (err) {
      throw err instanceof HttpError ? err : new HttpError(400, (err as Error).message);
    }
  };

  const completions = async (body: Record<string, unknown>): Promise<unknown> => {
    const o = modelOptions(body.model);
    const sampling = samplingOf(body);
    const prompts = typeof body.prompt === 'string' ? [body.prompt] : body.prompt;
    if (!Array.isArray(prompts) || prompts.length === 0 || !prompts.every((p) => typeof p === 'string'))
      throw new HttpError(400, 'prompt must be a string or a non-empty list of strings');
    if (prompts.length > SIM_LIMITS.prompts)
      throw new HttpError(
        400,
        `at most ${SIM_LIMITS.prompts} prompts per request on the sim server (got ${prompts.length})`,
      );
    if (prompts.length * (sampling.n ?? 1) > SIM_LIMITS.samples)
      throw new HttpError(
        400,
        `prompts × n must be at most ${SIM_LIMITS.samples} on the sim server (got ${prompts.length} × ${sampling.n ?? 1})`,
      );
    for (const [i, p] of prompts.entries()) checkPromptSize(p, `prompt[${i}]`);
    const reply = { chars: 0, samples: 0, expected: prompts.length * (sampling.n ?? 1) };
    const results: SimGenerateResult[] = [];
    for (const prompt of prompts) results.push(await run({ ...sampling, prompt }, o, reply));
    const choices: unknown[] = [];
    let promptTokens = 0;
    let completionTokens = 0;
    let samples = 0;
    for (const r of results) {
      for (const s of r.samples)
        choices.push({ index: choices.length, text: s.text, logprobs: null, ...choiceFinish(s) });
      promptTokens += r.usage.promptTokens;
      completionTokens += r.usage.completionTokens;
      samples += r.samples.length;
      countRole(r.role, r.usage.promptTokens, r.usage.completionTokens, r.samples.length);
    }
    count('/v1/completions', promptTokens, completionTokens, samples);
    return {
      id: `cmpl-sim-${++ids}`,
      object: 'text_completion',
      // Every reply says it is simulated: clients mark what they write from it, whatever the spec said.
      simulated: true,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'sim',
      choices,
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  };

  const chat = async (body: Record<string, unknown>): Promise<unknown> => {
    const o = modelOptions(body.model);
    const sampling = samplingOf(body);
    const raw = body.messages;
    if (!Array.isArray(raw) || raw.length === 0)
      throw new HttpError(400, 'messages must be a non-empty list');
    const messages: ChatMessage[] = raw.map((m, i) => {
      const role = (m as { role?: unknown })?.role;
      let content = (m as { content?: unknown })?.content;
      if (Array.isArray(content))
        content = content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
      if ((role !== 'system' && role !== 'user' && role !== 'assistant') || typeof content !== 'string')
        throw new HttpError(
          400,
          `messages[${i}] must have a role (system, user, assistant) and string content`,
        );
      return { role, content };
    });
    if (body.continue_final_message === true && body.add_generation_prompt === true)
      throw new HttpError(400, 'continue_final_message and add_generation_prompt cannot both be true');
    let chars = 0;
    for (const m of messages) chars += m.content.length;
    if (chars > SIM_LIMITS.promptChars)
      throw new HttpError(
        413,
        `the messages are ${chars} characters; the sim server reads at most ${SIM_LIMITS.promptChars} per request`,
      );
    const r = await run({ ...sampling, messages }, o, { chars: 0, samples: 0, expected: sampling.n ?? 1 });
    countRole(r.role, r.usage.promptTokens, r.usage.completionTokens, r.samples.length);
    count('/v1/chat/completions', r.usage.promptTokens, r.usage.completionTokens, r.samples.length);
    return {
      id: `chatcmpl-sim-${++ids}`,
      object: 'chat.completion',
      simulated: true,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'sim',
      choices: r.samples.map((s, index) => ({
        index,
        message: { role: 'assistant', content: s.text },
        logprobs: null,
        ...choiceFinish(s),
      })),
      usage: {
        prompt_tokens: r.usage.promptTokens,
        completion_tokens: r.usage.completionTokens,
        total_tokens: r.usage.promptTokens + r.usage.completionTokens,
      },
    };
  };

  const pooling = async (body: Record<string, unknown>): Promise<unknown> => {
    const o = modelOptions(body.model);
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((p) => typeof p === 'string'))
      throw new HttpError(400, 'input must be a string or a non-empty list of strings');
    if (inputs.length > SIM_LIMITS.prompts)
      throw new HttpError(
        400,
        `at most ${SIM_LIMITS.prompts} inputs per request on the sim server (got ${inputs.length})`,
      );
    for (const [i, p] of inputs.entries()) checkPromptSize(p, `input[${i}]`);
    let promptTokens = 0;
    const data: unknown[] = [];
    for (const [index, input] of inputs.entries()) {
      let r: ReturnType<typeof simPool>;
      try {
        r = simPool(o, readers, input);
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
      promptTokens += r.usage.promptTokens;
      countRole('prm', r.usage.promptTokens, 0, 1);
      data.push({ index, object: 'pooling', data: r.data });
      await breathe();
    }
    count('/pooling', promptTokens, 0, inputs.length);
    return {
      id: `pool-sim-${++ids}`,
      object: 'list',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'sim',
      data,
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
    };
  };

  /**
   * A reply as JSON: a long `choices` (or pooling `data`) list is written a few hundred entries at
   * a time with the event loop let in between, so turning 20 MB of samples into text does not
   * hold the server (the same bytes as one JSON.stringify).
   */
  const sendReply = async (res: ServerResponse, reply: unknown): Promise<void> => {
    const r = reply as Record<string, unknown>;
    const key = Array.isArray(r.choices) ? 'choices' : Array.isArray(r.data) ? 'data' : null;
    const list = key ? (r[key] as unknown[]) : [];
    if (!key || list.length <= 256) return sendJson(res, 200, reply);
    const shell = JSON.stringify({ ...r, [key]: [] });
    const at = shell.indexOf(`"${key}":[]`) + key.length + 3;
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.write(shell.slice(0, at + 1));
    for (let i = 0; i < list.length; i += 256) {
      const part = list.slice(i, i + 256).map((x) => JSON.stringify(x));
      res.write((i > 0 ? ',' : '') + part.join(','));
      await breathe();
    }
    res.end(shell.slice(at + 1));
  };

  const handlers: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    '/v1/completions': completions,
    '/v1/chat/completions': chat,
    '/pooling': pooling,
    '/v1/pooling': pooling,
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    checkHost(req, hosts);
    if (token) {
      const auth = req.headers.authorization;
      if (!sameToken(auth?.startsWith('Bearer ') ? auth.slice(7) : null, token))
        throw new HttpError(401, 'missing or wrong bearer token (send it as the API key)');
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method === 'GET') {
      if (path === '/metrics') return sendJson(res, 200, metrics);
      if (path === '/v1/models' || path === '/models')
        return sendJson(res, 200, {
          object: 'list',
          // `simulated: true` tells clients (stepwise's isSimulatedBackend) that nothing here is a real model.
          data: [
            { id: 'sim', object: 'model', created: 0, owned_by: 'stepwise-sim (simulated)', simulated: true },
          ],
        });
      if (path === '/health') return sendJson(res, 200, { ok: true, simulated: true });
      return sendJson(res, 404, errorBody(404, `no route GET ${path}`));
    }
    if (req.method === 'POST' && path === '/metrics/reset') {
      // A web page can send a body-less or text/plain POST anywhere; it cannot send JSON cross-site.
      requireJsonBody(req);
      await readBody(req, SIM_MAX_BODY_BYTES);
      metrics = emptyMetrics();
      return sendJson(res, 200, { ok: true });
    }
    const handler = req.method === 'POST' ? handlers[path] : undefined;
    if (!handler) {
      await readBody(req, SIM_MAX_BODY_BYTES).catch(() => '');
      return sendJson(res, 404, errorBody(404, `no route ${req.method} ${path}`));
    }
    requireJsonBody(req);
    const text = await readBody(req, SIM_MAX_BODY_BYTES);
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    if (failRate > 0 && faults.chance(failRate)) {
      metrics.injectedFailures++;
      return sendJson(res, 500, errorBody(500, 'sim: injected failure'));
    }
    try {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new HttpError(400, 'the request body is not valid JSON');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new HttpError(400, 'the request body must be a JSON object');
      await serially(async () => {
        sliceStart = performance.now();
        const reply = await handler(body as Record<string, unknown>);
        await sendReply(res, reply);
      });
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      if (status < 500) metrics.badRequests++;
      sendJson(res, status, errorBody(status, (err as Error).message));
    }
  };

  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    handle(req, res).catch((err) => {
      if (res.headersSent) return;
      // Refusals before the body is read (wrong host, token, content type, size) are counted too.
      const status = err instanceof HttpError ? err.status : 500;
      if (status < 500) metrics.badRequests++;
      sendJson(res, status, errorBody(status, (err as Error).message));
    });
  });
  server.keepAliveTimeout = 60_000;
  // Many more connections than the other servers: benchmarks drive it with hundreds of clients.
  applyServerLimits(server, 1024);
  await listenOrExplain(server, port, host);
  const actual = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
  return {
    url,
    baseURL: `${url}/v1`,
    port: actual,
    options: serverOptions,
    metrics: () => structuredClone(metrics),
    resetMetrics: () => {
      metrics = emptyMetrics();
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
