import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelCallError, StepwiseError, UnsupportedCapabilityError } from '../../src/core/errors.js';
import { createRng } from '../../src/core/rng.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { ChatReply, CompletionReply, checkReply, PoolingReply } from '../../src/models/openai-api.js';
import { type Loopback, listenOnLoopback } from '../support/loopback.js';

/**
 * The edge to OpenAI-compatible servers: replies are validated (zod, src/models/openai-api.ts)
 * and a call that fails for good is a ModelCallError whose fields say who, where and what.
 */

const choice = { index: 0, text: 'x', finish_reason: 'stop', logprobs: null };
const usage = { prompt_tokens: 1, completion_tokens: 1 };

describe('reply shapes', () => {
  it('accepts what servers send, unknown fields included', () => {
    const ok = checkReply(CompletionReply, {
      id: 'c',
      choices: [{ ...choice, extra: 1 }],
      usage,
      system_fingerprint: 'x',
    });
    expect(ok.ok).toBe(true);
    expect(
      checkReply(ChatReply, { choices: [{ index: 0, message: { content: null }, finish_reason: 'stop' }] })
        .ok,
    ).toBe(true);
    expect(checkReply(PoolingReply, { data: [{ data: [0.1, 0.9] }] }).ok).toBe(true);
  });

  it('names the field that does not fit, with what came instead', () => {
    expect(checkReply(CompletionReply, { choices: [{ index: 0, finish_reason: 'stop' }] })).toEqual({
      ok: false,
      problem: 'choices[0].text: expected string, got undefined',
    });
    expect(checkReply(CompletionReply, { choices: [choice, { ...choice, text: 7 }] })).toEqual({
      ok: false,
      problem: 'choices[1].text: expected string, got number',
    });
    expect(checkReply(CompletionReply, { choices: 'none' })).toEqual({
      ok: false,
      problem: 'choices: expected array, got string',
    });
    expect(checkReply(ChatReply, { choices: [{ index: 0, finish_reason: 'stop' }] })).toMatchObject({
      ok: false,
      problem: 'choices[0].message: expected object, got undefined',
    });
    expect(
      checkReply(CompletionReply, {
        choices: [{ ...choice, logprobs: { tokens: ['a'], token_logprobs: ['x'] } }],
      }),
    ).toMatchObject({
      ok: false,
      problem: 'choices[0].logprobs.token_logprobs[0]: expected number, got string',
    });
    expect(checkReply(PoolingReply, { data: [{ rows: [] }] })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^data\[0\]\.data: /),
    });
  });
});

/** A server whose every answer is `reply(path)`: [status, JSON body]. */
let answer: (path: string) => [number, unknown] = () => [200, {}];
let server: Loopback;
beforeAll(async () => {
  server = await listenOnLoopback(
    http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, body] = answer(req.url ?? '');
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    }),
  );
});
afterAll(() => server.close());

const models: OpenAIModel[] = [];
afterEach(async () => {
  for (const m of models.splice(0)) await m.close();
});
function model(maxRetries = 0): OpenAIModel {
  const m = new OpenAIModel({
    model: 'm',
    baseUrl: `${server.origin}/v1`,
    maxRetries,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    rng: createRng(1),
    serverKind: 'vllm',
  });
  models.push(m);
  return m;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('ModelCallError', () => {
  it('a malformed reply is an invalid-reply error naming the field, not an empty sample', async () => {
    answer = () => [200, { choices: [{ index: 0, finish_reason: 'stop' }], usage }];
    const err = await failure(model().generate({ prompt: 'p', maxTokens: 4 }));
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err).toMatchObject({
      provider: 'openai',
      model: 'm',
      url: `${server.origin}/v1`,
      kind: 'invalid-reply',
      retryable: false,
    });
    expect((err as Error).message).toMatch(
      /malformed reply: choices\[0\]\.text: expected string, got undefined/,
    );
    answer = () => [200, { choices: [{ index: 0, finish_reason: 'stop', message: 'hi' }] }];
    const chat = await failure(
      model().generate({ messages: [{ role: 'user', content: 'q' }], maxTokens: 4 }),
    );
    expect((chat as Error).message).toMatch(/choices\[0\]\.message: expected object, got string/);
  });

  it('carries kind, HTTP status, retryability and attempts of a failed call', async () => {
    answer = () => [404, { error: { message: 'no such model' } }];
    expect(await failure(model(3).generate({ prompt: 'p', maxTokens: 4 }))).toMatchObject({
      kind: 'client',
      status: 404,
      retryable: false,
      attempts: 1,
    });
    answer = () => [500, { error: { message: 'boom' } }];
    const err = await failure(model(2).generate({ prompt: 'p', maxTokens: 4 }));
    expect(err).toMatchObject({ kind: 'server', status: 500, retryable: true, attempts: 3 });
    expect((err as Error).message).toMatch(/failed after 3 attempts \(server, HTTP 500\)/);
  });

  it('a server without echoed logprobs cannot score: an unsupported-capability error', async () => {
    answer = () => [200, { choices: [choice], usage }];
    const err = await failure(model().score('a', 'b'));
    expect(err).toBeInstanceOf(UnsupportedCapabilityError);
    expect(err).toMatchObject({ provider: 'openai', model: 'm', capability: 'score', exitCode: 2 });
    expect((err as Error).message).toMatch(/choices\[0\]\.logprobs: expected object, got null/);
  });

  it('a /pooling reply without rows names the field', async () => {
    answer = () => [200, { data: [] }];
    const err = await failure(model().pool('x'));
    expect(err).toMatchObject({ kind: 'invalid-reply', retryable: false });
    expect((err as Error).message).toMatch(/pooling: .* malformed reply: data: /);
  });
});
