import { afterEach, describe, expect, it } from 'vitest';
import { StepwiseError, UnsupportedCapabilityError } from '../../src/core/errors.js';
import { createRng } from '../../src/core/rng.js';
import { createShepherdJudge } from '../../src/judge/shepherd.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { deriveSeed } from '../../src/models/seeds.js';
import { serverInfoFromModels } from '../../src/models/server-kind.js';
import { sampleEndsSolution } from '../../src/search/domain.js';
import { loadPeerFixture, type ReplayServer, startReplayServer } from '../support/replay-server.js';

/**
 * Conformance: the OpenAI backend against replies of the real peers (test/fixtures/peers/*.json,
 * each recorded from the server or written from the source file it cites).
 */
const servers: ReplayServer[] = [];
const models: OpenAIModel[] = [];

async function peer(name: string): Promise<ReplayServer> {
  const s = await startReplayServer(loadPeerFixture(name));
  servers.push(s);
  return s;
}

function model(
  s: ReplayServer,
  extra: Partial<ConstructorParameters<typeof OpenAIModel>[0]> = {},
): OpenAIModel {
  const m = new OpenAIModel({
    model: 'm',
    baseUrl: s.url,
    rng: createRng(1),
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    maxRetries: 2,
    ...extra,
  });
  models.push(m);
  return m;
}

const continueMessages = [
  { role: 'user' as const, content: 'What is 2+2?' },
  { role: 'assistant' as const, content: '2 + 2 = 4,' },
];

afterEach(async () => {
  for (const m of models.splice(0)) await m.close();
  for (const s of servers.splice(0)) await s.close();
});

describe('vLLM', () => {
  it('reads an integer stop_reason as a stop token (the solution ends), a string as the stop string', async () => {
    const s = await peer('vllm');
    const r = await model(s).generate({ prompt: 'p', n: 3, maxTokens: 64, temperature: 1, stop: ['\n\n'] });
    expect(r.samples.map((x) => x.stopReason)).toEqual(['\n\n', null, null]);
    expect(r.samples[1].stopTokenId).toBe(128009);
    expect(sampleEndsSolution(r.samples[0], '\n\n')).toBe(false);
    // An EOS id from generation_config is the end of the text, not the step separator.
    expect(sampleEndsSolution({ ...r.samples[1], text: 'Then 2 + 2 = 4.' }, '\n\n')).toBe(true);
    // The family (`GET /v1/models`, asked once: stops are read per family), then one completion.
    expect(s.requests.map((q) => q.path)).toEqual(['/v1/models', '/v1/completions']);
  });

  it('sends greedy requests with n = 1 and does not downgrade the endpoint for sampled ones', async () => {
    const s = await peer('vllm');
    const m = model(s);
    const greedy = await m.generate({ prompt: 'p', n: 3, maxTokens: 16, temperature: 0 });
    expect(greedy.samples).toHaveLength(3);
    expect(greedy.warnings).toEqual([]);
    expect(s.requests.map((q) => [q.body.n, q.status])).toEqual([
      [undefined, 200],
      [undefined, 200],
      [undefined, 200],
    ]);
    const sampled = await m.generate({ prompt: 'p', n: 3, maxTokens: 16, temperature: 1 });
    expect(sampled.samples).toHaveLength(3);
    expect(s.requests.slice(3).map((q) => q.body.n)).toEqual([3]);
  });

  it('scores a continuation when the echoed prompt starts with BOS (offsets counted from the BOS text)', async () => {
    const s = await peer('vllm');
    const r = await model(s).score('2+2 is', ' 4');
    expect(r.tokens).toEqual([{ token: ' 4', logprob: -0.25 }]);
    expect(r.logprob).toBe(-0.25);
  });

  it('continues an assistant message with continue_final_message and add_generation_prompt false', async () => {
    const s = await peer('vllm');
    const r = await model(s).generate({ messages: continueMessages, n: 2, maxTokens: 32, temperature: 1 });
    expect(s.requests.map((q) => q.exchange)).toEqual(['models', 'continue the final assistant message']);
    expect(s.requests[1].body).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(r.samples[0].text).toBe(' so the answer is \\boxed{4}.');
    expect(r.samples[1].stopTokenId).toBe(128009);
  });

  it('explains a context overflow', async () => {
    const s = await peer('vllm');
    const err = await model(s)
      .generate({ prompt: 'x'.repeat(3000), maxTokens: 512 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/maximum context length is 4096 tokens/);
    expect(err.message).toMatch(/lower --max-tokens/);
    expect(s.requests).toHaveLength(1);
  });

  it("keeps the reason of older vLLM's top-level error bodies", async () => {
    const s = await peer('vllm');
    const err = await model(s)
      .generate({ prompt: 'p', maxTokens: 8, temperature: 0, extra: { n: 3 } })
      .catch((e) => e);
    expect(err.message).toMatch(/HTTP 400\): 400 n must be 1 when using greedy sampling, got 3\./);
  });

  it('pools at the server root', async () => {
    const s = await peer('vllm');
    const r = await model(s).pool('steps<extra_0>');
    expect(r.data).toEqual([
      [0.1, 0.9],
      [0.7, 0.3],
    ]);
    expect(s.requests[0].path).toBe('/pooling');
  });
});

describe('SGLang', () => {
  it('scores a continuation though SGLang sends every text_offset as -1, or refuses when the tokens do not spell the text', async () => {
    const s = await peer('sglang');
    const m = model(s);
    const r = await m.score('2+2 is', ' 4');
    expect(r.tokens).toEqual([{ token: ' 4', logprob: -0.25 }]);
    expect(r.logprob).toBe(-0.25);
    const err = await m.score('3+3 is', ' 6').catch((e) => e);
    expect(err).toBeInstanceOf(UnsupportedCapabilityError);
    expect(err.message).toMatch(/no text offsets/);
  });

  it('a seeded n > 1 request goes out one sample per request, each with its own seed (SGLang gives all choices one)', async () => {
    const s = await peer('sglang');
    const r = await model(s).generate({ prompt: 'p', n: 3, maxTokens: 32, temperature: 1, seed: 5 });
    expect(r.samples).toHaveLength(3);
    const sent = s.requests.filter((q) => q.method === 'POST');
    expect(sent.map((q) => q.body.n)).toEqual([undefined, undefined, undefined]);
    expect(sent.map((q) => q.body.seed).sort()).toEqual([0, 1, 2].map((k) => deriveSeed(5, k)).sort());
    expect(r.warnings).toEqual([]);
    // Without a seed there is nothing to share: one request with n.
    const before = s.requests.length;
    await model(s).generate({ prompt: 'p', n: 2, maxTokens: 32, temperature: 1 });
    expect(
      s.requests
        .slice(before)
        .filter((q) => q.method === 'POST')
        .map((q) => q.body.n),
    ).toEqual([2]);
  });

  it('reads matched_stop like stop_reason', async () => {
    const s = await peer('sglang');
    const r = await model(s).generate({ prompt: 'p', n: 2, maxTokens: 32, temperature: 1 });
    expect(r.samples.map((x) => x.stopReason)).toEqual(['\n\n', null]);
    expect(r.samples[1].stopTokenId).toBe(151645);
  });

  it('continues an assistant message with continue_final_message; the reply is only the continuation', async () => {
    const s = await peer('sglang');
    const r = await model(s).generate({ messages: continueMessages, maxTokens: 32 });
    expect(s.requests[1].body).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(r.samples[0].text).toBe(' so the answer is \\boxed{4}.');
  });
});

describe('llama.cpp (current, recorded from ../shared/bin/llama-server)', () => {
  it('reads /v1/completions logprobs in the chat layout', async () => {
    const s = await peer('llamacpp-current');
    const r = await model(s).generate({
      prompt: 'Once upon a time',
      maxTokens: 3,
      logprobs: 2,
      temperature: 0,
    });
    const lp = r.samples[0].logprobs!;
    expect(lp.map((t) => t.token)).toEqual([',', ' there', ' was']);
    expect(lp[0].logprob).toBeCloseTo(-0.0318, 3);
    expect(lp[0].top?.map((t) => t.token)).toEqual([',', ' there']);
    expect(r.samples[0].completionTokens).toBe(3);
  });

  it('strips the echoed prefill from a continued assistant message', async () => {
    const s = await peer('llamacpp-current');
    const r = await model(s).generate({
      messages: [
        { role: 'user', content: 'Tell a story.' },
        { role: 'assistant', content: 'Once upon a time' },
      ],
      n: 2,
      maxTokens: 6,
      temperature: 1,
    });
    expect(r.samples.map((x) => x.text)).toEqual([', there was a little g', ', there was a little g']);
    // llama.cpp has no continue_final_message: it prefills on its own.
    expect(s.requests[1].body.continue_final_message).toBeUndefined();
  });

  it('caps n at the slot count: the 400 for n = 5 is followed by GET /props and n = 4, then the rest', async () => {
    const s = await peer('llamacpp-current');
    const m = model(s);
    const r = await m.generate({ prompt: 'Once upon a time', n: 5, maxTokens: 8, temperature: 1 });
    expect(r.samples).toHaveLength(5);
    expect(s.requests.map((q) => [q.method, q.path, q.body.n, q.status])).toEqual([
      ['POST', '/v1/completions', 5, 400],
      ['GET', '/v1/models', undefined, 200],
      ['GET', '/props', undefined, 200],
      ['POST', '/v1/completions', 4, 200],
      ['POST', '/v1/completions', undefined, 200],
    ]);
    expect(r.warnings.map((w) => w.details).join(' ')).toMatch(/at most n = 4 per request/);
    // Remembered: n = 8 is two requests of 4 from the start.
    await m.generate({ prompt: 'Once upon a time', n: 8, maxTokens: 8, temperature: 1 });
    expect(s.requests.slice(5).map((q) => [q.body.n, q.status])).toEqual([
      [4, 200],
      [4, 200],
    ]);
  });

  it("counts each choice of n = 4: usage is the first choice's alone, so the others are not a share of it", async () => {
    const s = await peer('llamacpp-current');
    const fixture = loadPeerFixture('llamacpp-current').exchanges.find((e) => e.request.match?.n === 4)!;
    const first = (fixture.reply.body as { usage: { completion_tokens: number } }).usage.completion_tokens;
    const r = await model(s).generate({ prompt: 'Once upon a time', n: 4, maxTokens: 8, temperature: 1 });
    expect(r.samples[0].completionTokens).toBe(first);
    // Every choice ran to max_tokens (finish "length"): 8 tokens each, 32 in all, not 8 split four ways.
    expect(r.samples.map((x) => x.completionTokens)).toEqual([8, 8, 8, 8]);
    expect(r.usage.completionTokens).toBe(32);
  });

  it('asks for the stop type with stop strings (verbose) and reads the stopping word', async () => {
    const s = await peer('llamacpp-current');
    const r = await model(s).generate({
      prompt: 'Once upon a time',
      maxTokens: 40,
      temperature: 0,
      stop: ['Lily', '.'],
    });
    const sent = s.requests.filter((q) => q.method === 'POST');
    expect(sent.map((q) => q.body.verbose)).toEqual([true]);
    expect(r.samples[0].stopReason).toBe('Lily');
    expect(sampleEndsSolution(r.samples[0], 'Lily')).toBe(false);
    expect(sampleEndsSolution(r.samples[0], '.')).toBe(true);
  });

  it('explains a context overflow instead of retrying it', async () => {
    const s = await peer('llamacpp-current');
    const err = await model(s)
      .generate({ prompt: 'Once upon a time '.repeat(200), maxTokens: 4 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/exceeds the available context size \(512 tokens\)/);
    expect(err.message).toMatch(/-np slots/);
    expect(s.requests).toHaveLength(1);
  });

  it('is recognised from /v1/models', () => {
    const models = loadPeerFixture('llamacpp-current').exchanges[0].reply.body;
    expect(serverInfoFromModels(models)).toMatchObject({
      kind: 'llama.cpp',
      models: [{ maxModelLen: 2048 }],
    });
  });
});

describe('llama.cpp (old)', () => {
  it('answers n > 1 with HTTP 500: one rejected request, then n = 1 for good', async () => {
    const s = await peer('llamacpp-old');
    const m = model(s);
    const t0 = Date.now();
    const r = await m.generate({ prompt: 'p', n: 4, maxTokens: 16, temperature: 1 });
    expect(r.samples).toHaveLength(4);
    expect(s.requests.map((q) => q.status)).toEqual([500, 200, 200, 200, 200]);
    expect(Date.now() - t0).toBeLessThan(2000);
    await Promise.all([1, 2, 3].map(() => m.generate({ prompt: 'p', n: 4, maxTokens: 16, temperature: 1 })));
    expect(s.requests.filter((q) => q.status === 500)).toHaveLength(1);
    expect(m.stats().failures.server).toBe(1);
  });

  it('refuses a chat "continuation" that is a new turn', async () => {
    const s = await peer('llamacpp-old');
    const err = await model(s)
      .generate({ messages: continueMessages, maxTokens: 16 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/did not continue the assistant message.*--prompt-form raw/);
  });
});

describe('Ollama', () => {
  it('serves the shepherd judge from its top logprobs (Ollama 0.12.11 and later return them)', async () => {
    const s = await peer('ollama');
    const judge = createShepherdJudge(model(s), { topLogprobs: 5 });
    const r = await judge.judge(
      { id: 'p', question: 'What is 2 + 2?', answer: '4', domain: 'math', source: 'test' },
      ['2 + 2 = 4.'],
    );
    expect(r.formatFailures).toBe(0);
    // + (−0.21, with " +" at −4.2) against − (−1.66).
    const good = Math.exp(-0.21) + Math.exp(-4.2);
    expect(r.judgments[0].score).toBeCloseTo(good / (good + Math.exp(-1.66)), 6);
    expect(s.requests.filter((q) => q.method === 'POST').map((q) => q.body.logprobs)).toEqual([5]);
  });

  it('continues a final assistant message without vLLM fields, and n is ignored so samples go one by one', async () => {
    const s = await peer('ollama');
    const r = await model(s).generate({ messages: continueMessages, n: 3, maxTokens: 16, temperature: 1 });
    expect(r.samples.map((x) => x.text)).toEqual(Array(3).fill(' so the answer is \\boxed{4}.'));
    expect(s.requests.map((q) => q.path)).toEqual([
      '/v1/models',
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/chat/completions',
    ]);
    expect(s.requests[1].body.continue_final_message).toBeUndefined();
    expect(s.requests[1].body.n).toBe(3);
    expect(s.requests.slice(2).every((q) => q.body.n === undefined)).toBe(true);
    expect(r.warnings.map((w) => w.details).join(' ')).toMatch(/returned 1 of n=3/);
  });
});
