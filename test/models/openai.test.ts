import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StepwiseError } from '../../src/core/errors.js';
import { createRng } from '../../src/core/rng.js';
import { OpenAIModel, parseBaseUrls, serverRoot } from '../../src/models/openai.js';
import { deriveSeed } from '../../src/models/seeds.js';
import { renderPolicyPrompt } from '../../src/prompts/policy.js';
import { type FlakyServer, startFlakyServer } from '../support/flaky-server.js';

const fast = { baseDelayMs: 5, maxDelayMs: 20 };
const servers: FlakyServer[] = [];
const models: OpenAIModel[] = [];

async function server(opts: Parameters<typeof startFlakyServer>[0] = {}): Promise<FlakyServer> {
  const s = await startFlakyServer({ rate500: 0, rate429: 0, dropRate: 0, delayRate: 0, ...opts });
  servers.push(s);
  return s;
}

function model(opts: ConstructorParameters<typeof OpenAIModel>[0]): OpenAIModel {
  const m = new OpenAIModel({ rng: createRng(1), retry: fast, ...opts });
  models.push(m);
  return m;
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

afterEach(async () => {
  for (const m of models.splice(0)) await m.close();
  for (const s of servers.splice(0)) await s.close();
});

describe('OpenAIModel', () => {
  it('sends one /v1/completions request with n, max_tokens, stop, seed and vLLM extras', async () => {
    const s = await server();
    const sent = () => s.requests.filter((q) => q.path !== '/v1/models');
    const m = model({ model: 'm', baseUrl: s.url });
    const r = await m.generate({
      prompt: renderPolicyPrompt('What is 2+2?'),
      n: 3,
      maxTokens: 64,
      stop: ['\n\n\n'],
      seed: 11,
      temperature: 0.7,
      topP: 0.9,
      extra: { top_k: 20, include_stop_str_in_output: true },
    });
    expect(r.samples).toHaveLength(3);
    expect(r.samples.every((x) => x.finishReason === 'stop' && x.text.includes('\\boxed{'))).toBe(true);
    expect(r.usage).toEqual({ calls: 1, promptTokens: 50, completionTokens: 60 });
    expect(r.samples.reduce((a, x) => a + x.completionTokens, 0)).toBe(60);
    expect(r.warnings).toEqual([]);
    expect(sent()).toHaveLength(1);
    const body = sent()[0].body;
    expect(sent()[0].path).toBe('/v1/completions');
    expect(body).toMatchObject({
      model: 'm',
      n: 3,
      max_tokens: 64,
      stop: ['\n\n\n'],
      seed: 11,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      include_stop_str_in_output: true,
    });
  });

  it('continues a final assistant message on /v1/chat/completions', async () => {
    const s = await server();
    const m = model({ model: 'm', baseUrl: s.url });
    const r = await m.generate({
      messages: [
        { role: 'user', content: 'Solve 1+1' },
        { role: 'assistant', content: 'Step 1:' },
      ],
      maxTokens: 8,
    });
    expect(r.samples).toHaveLength(1);
    // The server family is asked once, before the first continuation.
    expect(s.requests.map((q) => q.path)).toEqual(['/v1/models', '/v1/chat/completions']);
    expect(s.requests[1].body).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    const plain = await m.generate({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 8 });
    expect(plain.samples).toHaveLength(1);
    expect(s.requests[2].body.continue_final_message).toBeUndefined();
  });

  it('falls back to one request per sample when the server rejects n > 1, remembers it, and says so', async () => {
    const s = await server({ nativeN: false });
    const m = model({ model: 'm', baseUrl: s.url });
    // The server family is asked once (`GET /v1/models`): a seeded n > 1 request depends on it.
    const sent = () => s.requests.filter((q) => q.path !== '/v1/models');
    const r = await m.generate({ prompt: 'p', n: 4, seed: 5, maxTokens: 8 });
    expect(r.samples).toHaveLength(4);
    expect(r.warnings).toContainEqual({
      type: 'unsupported-setting',
      feature: 'n',
      details: expect.stringMatching(/n > 1/),
    });
    // One rejected request, then four single-sample requests with distinct derived seeds.
    expect(sent().map((q) => q.outcome)).toEqual(['bad-request', 'ok', 'ok', 'ok', 'ok']);
    const seeds = sent()
      .slice(1)
      .map((q) => q.body.seed);
    expect(seeds).toEqual([0, 1, 2, 3].map((i) => deriveSeed(5, i)));
    expect(
      sent()
        .slice(1)
        .every((q) => q.body.n === undefined),
    ).toBe(true);
    await m.generate({ prompt: 'q', n: 2, maxTokens: 8 });
    expect(
      sent()
        .slice(5)
        .map((q) => q.outcome),
    ).toEqual(['ok', 'ok']);
  });

  it('probes n > 1 with one request while concurrent callers wait for the answer', async () => {
    const s = await server({ nativeN: false, latencyMs: 5 });
    const m = model({ model: 'm', baseUrl: s.url });
    // The server family is asked once (`GET /v1/models`): a seeded n > 1 request depends on it.
    const sent = () => s.requests.filter((q) => q.path !== '/v1/models');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => m.generate({ prompt: `p${i}`, n: 3 })),
    );
    expect(results.every((r) => r.samples.length === 3)).toBe(true);
    expect(sent().filter((q) => q.outcome === 'ok')).toHaveLength(24);
    expect(sent().filter((q) => q.outcome === 'bad-request')).toHaveLength(1);
  });

  it('falls back when the server silently returns fewer choices than n', async () => {
    const s = await server({ nativeN: 'ignore' });
    const m = model({ model: 'm', baseUrl: s.url });
    const r = await m.generate({ prompt: 'p', n: 3, maxTokens: 8 });
    expect(r.samples).toHaveLength(3);
    expect(r.warnings.map((w) => w.details).join(' ')).toMatch(/1 of n=3/);
    expect(s.requests).toHaveLength(3);
    expect(s.requests[0].body.n).toBe(3);
    expect(s.requests[1].body.n).toBeUndefined();
  });

  it('retries 500s, 429s (honouring Retry-After) and dropped connections until it succeeds', async () => {
    const s = await server({ seed: 2, rate500: 0.3, rate429: 0.1, dropRate: 0.1 });
    const m = model({ model: 'm', baseUrl: s.url });
    const t0 = Date.now();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => m.generate({ prompt: `p${i}`, n: 2, maxTokens: 8 })),
    );
    expect(results.every((r) => r.samples.length === 2)).toBe(true);
    const stats = m.stats();
    const outcomes = s.requests.map((q) => q.outcome);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(20);
    expect(stats.retries).toBe(outcomes.length - 20);
    expect(stats.failures.server).toBe(outcomes.filter((o) => o === '500').length);
    expect(stats.failures['rate-limit']).toBe(outcomes.filter((o) => o === '429').length);
    expect(stats.failures.connection).toBe(outcomes.filter((o) => o === 'drop').length);
    if (outcomes.includes('429')) expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after the retry cap with a message naming the server and the failure', async () => {
    const s = await server({ rate500: 1 });
    const m = model({ model: 'm', baseUrl: s.url, maxRetries: 3 });
    const err = await m.generate({ prompt: 'p', maxTokens: 8 }).catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/failed after 4 attempts \(server, HTTP 500\)/);
    expect(err.message).toContain(s.url);
    expect(s.requests).toHaveLength(4);
  });

  it('does not retry a 4xx the server will reject again', async () => {
    const h = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'model "x" does not exist' } }));
      });
    });
    await new Promise<void>((r) => h.listen(0, '127.0.0.1', r));
    let hits = 0;
    h.on('request', () => hits++);
    const port = (h.address() as AddressInfo).port;
    const m = model({ model: 'x', baseUrl: `http://127.0.0.1:${port}/v1` });
    const err = await m.generate({ prompt: 'p', maxTokens: 8 }).catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/HTTP 404.*does not exist.*\/v1\/models/);
    expect(hits).toBe(1);
    await new Promise<void>((r) => h.close(() => r()));
  });

  it('fails fast with a clear message when the server was never reachable', async () => {
    const port = await deadPort();
    const m = model({ model: 'm', baseUrl: `http://127.0.0.1:${port}/v1` });
    const err = await m.generate({ prompt: 'p', maxTokens: 8 }).catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/connection refused.*--base-url/);
  });

  it('times out a hung request and retries it', async () => {
    const s = await server({ seed: 5, delayRate: 0.5, delayMs: 2000 });
    const m = model({ model: 'm', baseUrl: s.url, timeoutMs: 300 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => m.generate({ prompt: `p${i}`, maxTokens: 8 })),
    );
    expect(results.every((r) => r.samples.length === 1)).toBe(true);
    expect(m.stats().failures.timeout).toBe(s.requests.filter((q) => q.outcome === 'delay').length);
    expect(m.stats().failures.timeout).toBeGreaterThan(0);
  });

  it('routes across endpoints by least outstanding and fails over when one is dead', async () => {
    const a = await server({ latencyMs: 20 });
    const b = await server({ latencyMs: 20 });
    const m = model({ model: 'm', baseUrl: `${a.url},${b.url}`, concurrency: 4 });
    await Promise.all(Array.from({ length: 16 }, (_, i) => m.generate({ prompt: `p${i}`, maxTokens: 8 })));
    // Least-outstanding routing keeps the two equally fast endpoints within a request or two of
    // each other; which one frees a slot first is up to the scheduler on a loaded machine.
    expect(a.requests.length + b.requests.length).toBe(16);
    expect(Math.abs(a.requests.length - b.requests.length)).toBeLessThanOrEqual(2);

    const port = await deadPort();
    const m2 = model({ model: 'm', baseUrl: `http://127.0.0.1:${port}/v1,${a.url}`, concurrency: 4 });
    const before = a.requests.length;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => m2.generate({ prompt: `q${i}`, maxTokens: 8 })),
    );
    expect(results.every((r) => r.samples.length === 1)).toBe(true);
    expect(a.requests.length - before).toBe(12);
    expect(m2.endpoints.endpoints[0].deadUntil).toBeGreaterThan(0);
  });

  it('keeps at most `concurrency` requests in flight per endpoint', async () => {
    let inFlight = 0;
    let peak = 0;
    const h = http.createServer((req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              choices: [{ index: 0, text: 'x', finish_reason: 'length' }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
            }),
          );
        }, 10),
      );
    });
    await new Promise<void>((r) => h.listen(0, '127.0.0.1', r));
    const port = (h.address() as AddressInfo).port;
    const m = model({ model: 'm', baseUrl: `http://127.0.0.1:${port}/v1`, concurrency: 3 });
    const r = await Promise.all(Array.from({ length: 15 }, () => m.generate({ prompt: 'p', maxTokens: 1 })));
    expect(r[0].samples[0]).toMatchObject({ text: 'x', finishReason: 'length', completionTokens: 1 });
    expect(peak).toBe(3);
    await new Promise<void>((res) => h.close(() => res()));
  });

  it('scores a continuation from echoed prompt logprobs and pools at the server root', async () => {
    const s = await server();
    const m = model({ model: 'm', baseUrl: s.url });
    const sc = await m.score('The cat', ' sat on the mat');
    // Word tokens " sat", " on", " the", " mat" at −1 each; the generated token is excluded.
    expect(sc.tokens.map((t) => t.token)).toEqual([' sat', ' on', ' the', ' mat']);
    expect(sc.logprob).toBe(-4);
    expect(s.requests[0].body).toMatchObject({ echo: true, logprobs: 0, max_tokens: 1 });
    const pooled = await m.pool('input<extra_0>');
    expect(pooled.data).toEqual([
      [0.2, 0.8],
      [0.6, 0.4],
    ]);
    expect(s.requests[1].path).toBe('/pooling');
    expect(s.requests[1].body).toEqual({ model: 'm', input: 'input<extra_0>' });
  });

  it('parses base URL lists', () => {
    expect(parseBaseUrls('http://a:1/v1/, http://b:2/v1')).toEqual(['http://a:1/v1', 'http://b:2/v1']);
    expect(() => parseBaseUrls('nonsense')).toThrow(StepwiseError);
    expect(() => parseBaseUrls(' , ')).toThrow(/no base URL/);
    expect(serverRoot('http://h:8000/v1')).toBe('http://h:8000');
  });
});
