import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CachedModel } from '../../src/models/cache.js';
import { modelFingerprint } from '../../src/models/server-kind.js';
import { closeStores } from '../../src/store/db.js';
import { providers } from '../support/providers.js';
import { tempDir } from '../support/temp.js';

/**
 * The cache key holds what the server says it serves (`GET /v1/models`), not only its URL: two
 * servers, one after the other on the same port under the same model name, serve different
 * checkpoints; the second must not be answered with the first one's cached text.
 */

const dir = tempDir('stepwise-fingerprint-');
afterAll(() => closeStores());

/** An OpenAI-compatible server that answers every completion with `answer` and lists `entry`. */
async function server(port: number, entry: () => Record<string, unknown>, answer: string) {
  let completions = 0;
  let models = 0;
  const s = createServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (value: unknown) => {
      const text = JSON.stringify(value);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
      });
      res.end(text);
    };
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        models++;
        send({ object: 'list', data: [entry()] });
        return;
      }
      completions++;
      const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
      if (req.url === '/v1/chat/completions')
        send({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          usage,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer } }],
        });
      else
        send({
          id: 'c',
          object: 'text_completion',
          created: 0,
          model: 'm',
          usage,
          choices: [{ index: 0, finish_reason: 'stop', text: answer, logprobs: null }],
        });
    });
  });
  await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
  return {
    port: (s.address() as AddressInfo).port,
    counts: () => ({ completions, models }),
    close: () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  };
}

const storePath = join(dir, 'store.sqlite');
const request = { prompt: 'What is 2+2?', maxTokens: 8, temperature: 0 };
/** A fresh model, as a new process would build it (its own /v1/models question). */
const modelAt = (port: number) =>
  providers.languageModel('openai:m', {
    storePath,
    settings: { baseUrl: `http://127.0.0.1:${port}/v1` },
  }) as Promise<CachedModel>;

describe('cache key: the model behind the URL', () => {
  it('another checkpoint behind the same URL and name is a miss; the same one again is a hit', async () => {
    // vLLM-like entries: `created` is the time of the request (it changes), root names the checkpoint.
    const vllm = (root: string) => () => ({
      id: 'm',
      object: 'model',
      created: Date.now(),
      owned_by: 'vllm',
      root,
      max_model_len: 4096,
    });
    const a = await server(0, vllm('/models/a'), 'A says 4');
    const port = a.port;
    const first = await modelAt(port);
    expect((await first.generate(request)).samples[0].text).toBe('A says 4');
    // Same server, a new process: answered from the cache although `created` moved on.
    const again = await modelAt(port);
    const replay = await again.generate(request);
    expect(replay.samples[0].text).toBe('A says 4');
    expect(replay.cached).toBe(true);
    expect(a.counts().completions).toBe(1);
    await a.close();

    // Another checkpoint behind the same address, under the same name.
    const b = await server(port, vllm('/models/b'), 'B says 5');
    try {
      const other = await modelAt(port);
      const fresh = await other.generate(request);
      expect(fresh.cached).toBe(false);
      expect(fresh.samples[0].text).toBe('B says 5');
      expect(b.counts().completions).toBe(1);
      expect(other.cacheStats().cachedCalls).toBe(0);
      // And B's own answer is reused for B.
      const bAgain = await (await modelAt(port)).generate(request);
      expect(bAgain.cached).toBe(true);
      expect(bAgain.samples[0].text).toBe('B says 5');
      expect(b.counts().completions).toBe(1);
    } finally {
      await b.close();
    }
  });

  it('modelFingerprint keeps the stable fields, drops a request-time created, picks the named entry', () => {
    const reply = (created: number, extra: Record<string, unknown> = {}) => ({
      data: [
        {
          id: 'm',
          owned_by: 'vllm',
          created,
          root: '/ckpt',
          max_model_len: 2048,
          permission: [{ id: `p${created}` }],
          ...extra,
        },
        { id: 'other', owned_by: 'vllm', created },
      ],
    });
    expect(modelFingerprint(reply(1), 'm')).toEqual({
      id: 'm',
      owned_by: 'vllm',
      root: '/ckpt',
      max_model_len: 2048,
    });
    expect(modelFingerprint(reply(1), 'm')).toEqual(modelFingerprint(reply(2), 'm'));
    expect(modelFingerprint(reply(1), 'm')).not.toEqual(
      modelFingerprint(reply(1, { max_model_len: 8192 }), 'm'),
    );
    // A hosted API's created dates the model: kept.
    expect(modelFingerprint({ data: [{ id: 'm', owned_by: 'acme', created: 1700000000 }] }, 'm')).toEqual({
      id: 'm',
      owned_by: 'acme',
      created: 1700000000,
    });
    // llama.cpp serves its one model under any name: that entry, with its meta.
    const llama = { data: [{ id: 'x.gguf', owned_by: 'llamacpp', created: 5, meta: { n_params: 292800 } }] };
    expect(modelFingerprint(llama, 'm')).toEqual({
      id: 'x.gguf',
      owned_by: 'llamacpp',
      meta: { n_params: 292800 },
    });
    expect(modelFingerprint(reply(1), 'missing')).toBeNull();
    expect(modelFingerprint({ error: 'no' }, 'm')).toBeNull();
  });
});
