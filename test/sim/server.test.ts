import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseJudgeVerdict,
  prefixFromChunks,
  renderJudgeMessages,
  renderPolicyMessages,
  renderPolicyPrompt,
  renderQwenPrmInput,
} from '../../src/prompts/index.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  countSimTokens,
  createSimModel,
  DEFAULT_SIM_OPTIONS,
  generateSimProblems,
  SIM_LIMITS,
  SIM_MAX_BODY_BYTES,
  type SimServer,
  type SimServerMetrics,
  sampleSimSolution,
  simChunksOf,
  startSimServer,
  wrongChunks,
} from '../../src/sim/index.js';
import { rawRequest } from '../support/raw-http.js';

const [problem] = generateSimProblems({ count: 1, seed: 13, minSteps: 5, maxSteps: 5 });
const solution = sampleSimSolution(problem, DEFAULT_SIM_OPTIONS, 3);

interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
/** The parts of OpenAI / vLLM response bodies these tests read. */
interface Wire {
  choices: Array<{
    index: number;
    text: string;
    message: { content: string };
    finish_reason: string;
    stop_reason: string | null;
  }>;
  usage: WireUsage;
  data: Array<{ data: number[][] }>;
  error: { message: string };
}

async function post(server: SimServer, path: string, body: unknown): Promise<{ status: number; json: Wire }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Wire };
}

describe('sim server', () => {
  let server: SimServer;
  beforeAll(async () => {
    server = await startSimServer({ readers: PROMPT_READERS, seed: 3 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists its model and reports health', async () => {
    const models = (await (await fetch(`${server.baseURL}/models`)).json()) as {
      data: Array<{ id: string }>;
    };
    expect(models.data[0].id).toBe('sim');
    const health = (await (await fetch(`${server.url}/health`)).json()) as { simulated: boolean };
    expect(health.simulated).toBe(true);
  });

  it('answers /v1/completions exactly as the in-process model does, with consistent usage', async () => {
    const prompt = renderPolicyPrompt(problem.question, prefixFromChunks(solution.slice(0, 2)));
    const body = { model: 'sim', prompt, n: 5, seed: 11, max_tokens: 400, stop: ['\n\n'] };
    const { status, json } = await post(server, '/v1/completions', body);
    expect(status).toBe(200);
    const local = await createSimModel('sim?seed=3', PROMPT_READERS).generate({
      prompt,
      n: 5,
      seed: 11,
      maxTokens: 400,
      stop: ['\n\n'],
    });
    expect(json.choices.map((c) => c.text)).toEqual(local.samples.map((s) => s.text));
    expect(json.choices.map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
    expect(json.choices.map((c) => c.stop_reason)).toEqual(local.samples.map((s) => s.stopReason));
    expect(json.usage).toEqual({
      prompt_tokens: countSimTokens(prompt),
      completion_tokens: local.usage.completionTokens,
      total_tokens: countSimTokens(prompt) + local.usage.completionTokens,
    });
    // A list of prompts: n choices per prompt, indexed in order.
    const two = await post(server, '/v1/completions', {
      prompt: [prompt, prompt],
      n: 2,
      seed: 1,
      max_tokens: 50,
    });
    expect(two.json.choices).toHaveLength(4);
    expect(two.json.usage.prompt_tokens).toBe(2 * countSimTokens(prompt));
  });

  it('continues a final assistant message on /v1/chat/completions', async () => {
    const messages = renderPolicyMessages(problem.question, prefixFromChunks(solution.slice(0, 3)));
    const { json } = await post(server, '/v1/chat/completions', {
      model: 'sim',
      messages,
      continue_final_message: true,
      add_generation_prompt: false,
      seed: 2,
      max_tokens: 1000,
    });
    const text = json.choices[0].message.content;
    expect(simChunksOf(messages[1].content + text).slice(0, 3)).toEqual(solution.slice(0, 3));
    expect(text).toMatch(/\\boxed\{-?\d+\}\.$/);
    expect(json.choices[0].finish_reason).toBe('stop');
    const bad = await post(server, '/v1/chat/completions', {
      messages,
      continue_final_message: true,
      add_generation_prompt: true,
    });
    expect(bad.status).toBe(400);
  });

  it('reads per-request world options from the model name', async () => {
    const wrongIdx = wrongChunks(problem, solution).indexOf(false);
    const messages = renderJudgeMessages({
      problem: problem.question,
      history: solution.slice(0, wrongIdx),
      chunk: solution[wrongIdx],
    });
    const harsh = await post(server, '/v1/chat/completions', { model: 'sim?specificity=0', messages, n: 20 });
    expect(harsh.json.choices.every((c) => parseJudgeVerdict(c.message.content) === 'Negative')).toBe(true);
    const perfect = await post(server, '/v1/chat/completions', {
      model: 'sim?judge=perfect',
      messages,
      n: 20,
    });
    expect(perfect.json.choices.every((c) => parseJudgeVerdict(c.message.content) === 'Positive')).toBe(true);
    const typo = await post(server, '/v1/chat/completions', { model: 'sim?specifity=1', messages });
    expect(typo.status).toBe(400);
    expect(typo.json.error.message).toMatch(/unknown option/);
  });

  it('serves /pooling in the vLLM shape', async () => {
    const input = renderQwenPrmInput(problem.question, solution);
    const { status, json } = await post(server, '/pooling', { model: 'sim', input });
    expect(status).toBe(200);
    expect(json.data[0].data).toHaveLength(solution.length);
    expect(json.data[0].data).toEqual((await createSimModel('sim?seed=3', PROMPT_READERS).pool!(input)).data);
    expect((await post(server, '/pooling', { input: 'not a PRM input' })).status).toBe(400);
    // The oracle PRM only when a request names it (so the judge spec of every run using it shows it).
    const oracle = await post(server, '/pooling', { model: 'sim?prm=oracle', input });
    expect(oracle.json.data[0].data).toEqual(
      (await createSimModel('sim?seed=3&prm=oracle', PROMPT_READERS).pool!(input)).data,
    );
    expect(oracle.json.data[0].data).not.toEqual(json.data[0].data);
    await expect(startSimServer({ readers: PROMPT_READERS, spec: 'sim?prm=oracle' })).rejects.toThrow(
      /oracle.*model of each request/,
    );
    await expect(startSimServer({ readers: PROMPT_READERS, prmTarget: 'oracle' })).rejects.toThrow(
      /prm=oracle/,
    );
  });

  it('counts in /metrics exactly the usage it reported', async () => {
    server.resetMetrics();
    let prompt = 0;
    let completion = 0;
    let samples = 0;
    const record = (u: WireUsage, n: number) => {
      prompt += u.prompt_tokens;
      completion += u.completion_tokens;
      samples += n;
    };
    for (let i = 0; i < 5; i++) {
      const r = await post(server, '/v1/completions', {
        prompt: renderPolicyPrompt(problem.question, ''),
        n: 3,
        max_tokens: 100,
      });
      record(r.json.usage, r.json.choices.length);
    }
    const c = await post(server, '/v1/chat/completions', {
      messages: renderJudgeMessages({ problem: problem.question, history: [], chunk: solution[0] }),
    });
    record(c.json.usage, 1);
    const p = await post(server, '/pooling', { input: renderQwenPrmInput(problem.question, solution) });
    record(p.json.usage, 1);
    await post(server, '/v1/completions', { prompt: 'not a prompt the world answers', max_tokens: 5 });
    await post(server, '/v1/completions', '{not json');
    const m = (await (await fetch(`${server.url}/metrics`)).json()) as SimServerMetrics;
    expect(m.simulated).toBe(true);
    expect(m.requests).toBe(7);
    expect(m.promptTokens).toBe(prompt);
    expect(m.completionTokens).toBe(completion);
    expect(m.samples).toBe(samples);
    expect(m.badRequests).toBe(2);
    expect(m.byEndpoint['/v1/completions'].requests).toBe(5);
    expect(m.byEndpoint['/v1/chat/completions'].requests).toBe(1);
    expect(m.byEndpoint['/pooling'].requests).toBe(1);
    expect(m.byRole.policy?.requests).toBe(5);
    expect(m.byRole.judge?.requests).toBe(1);
    expect(m.byRole.prm?.requests).toBe(1);
    expect(server.metrics()).toEqual(m);
  });
});

describe('sim server fault injection and latency', () => {
  it('answers about fail-rate of requests with HTTP 500, counted apart', async () => {
    const server = await startSimServer({ readers: PROMPT_READERS, failRate: 0.3, seed: 1 });
    try {
      let failed = 0;
      const N = 200;
      for (let i = 0; i < N; i++) {
        const r = await post(server, '/v1/completions', {
          prompt: renderPolicyPrompt(problem.question, ''),
          max_tokens: 20,
        });
        if (r.status === 500) failed++;
        else expect(r.status).toBe(200);
      }
      expect(Math.abs(failed / N - 0.3)).toBeLessThan(4 * Math.sqrt((0.3 * 0.7) / N));
      const m = server.metrics();
      expect(m.injectedFailures).toBe(failed);
      expect(m.requests).toBe(N - failed);
    } finally {
      await server.close();
    }
  });

  it('delays answers by latency-ms', async () => {
    const server = await startSimServer({ readers: PROMPT_READERS, latencyMs: 120 });
    try {
      const t0 = performance.now();
      const r = await post(server, '/v1/completions', {
        prompt: renderPolicyPrompt(problem.question, ''),
        max_tokens: 20,
      });
      expect(r.status).toBe(200);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(115);
    } finally {
      await server.close();
    }
  });
});

describe('sim server under attack', () => {
  let server: SimServer;
  beforeAll(async () => {
    server = await startSimServer({ readers: PROMPT_READERS, seed: 3 });
  });
  afterAll(async () => {
    await server.close();
  });
  const json = { 'content-type': 'application/json' };
  const body = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ prompt: renderPolicyPrompt(problem.question, ''), max_tokens: 20, ...extra });

  it('answers only its own host names: a DNS-rebinding Host gets 403', async () => {
    const evil = await rawRequest(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: { ...json, host: `evil.example:${server.port}` },
      body: body(),
    });
    expect(evil.status).toBe(403);
    expect((await rawRequest(`${server.url}/metrics`, { headers: { host: 'evil.example' } })).status).toBe(
      403,
    );
    const real = await rawRequest(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: json,
      body: body(),
    });
    expect(real.status).toBe(200);
  });

  it('n and max_tokens are capped with a 400 naming the limit; so are prompts per request', async () => {
    const many = await rawRequest(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: json,
      body: body({ n: 100000 }),
    });
    expect(many.status).toBe(400);
    expect(JSON.parse(many.body).error.message).toContain(String(SIM_LIMITS.n));
    const long = await post(server, '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: SIM_LIMITS.maxTokens + 1,
    });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toContain(String(SIM_LIMITS.maxTokens));
    const prompts = await post(server, '/v1/completions', {
      prompt: Array.from({ length: SIM_LIMITS.prompts + 1 }, () => 'p'),
      max_tokens: 1,
    });
    expect(prompts.status).toBe(400);
    const product = await post(server, '/v1/completions', {
      prompt: ['a', 'b', 'c', 'd', 'e'],
      n: SIM_LIMITS.n,
    });
    expect(product.status).toBe(400);
    expect(product.json.error.message).toContain(String(SIM_LIMITS.samples));
    expect((await post(server, '/v1/completions', JSON.parse(body({ n: 0 })))).status).toBe(400);
    expect((await post(server, '/v1/completions', JSON.parse(body({ n: 4 })))).status).toBe(200);
  });

  it('takes JSON only as application/json (415): a page cannot reset /metrics or generate with a simple POST', async () => {
    await post(server, '/v1/completions', JSON.parse(body()));
    const before = server.metrics().requests;
    expect(before).toBeGreaterThan(0);
    for (const headers of <Record<string, string>[]>[
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      {},
    ]) {
      const gen = await rawRequest(`${server.url}/v1/completions`, { method: 'POST', headers, body: body() });
      expect(gen.status, JSON.stringify(headers)).toBe(415);
      const reset = await rawRequest(`${server.url}/metrics/reset`, { method: 'POST', headers, body: '{}' });
      expect(reset.status, JSON.stringify(headers)).toBe(415);
    }
    expect(server.metrics().requests).toBe(before);
    const reset = await rawRequest(`${server.url}/metrics/reset`, {
      method: 'POST',
      headers: json,
      body: '{}',
    });
    expect(reset.status).toBe(200);
    expect(server.metrics().requests).toBe(0);
  });

  it('a body over the shared cap gets 413, not 500, and the server stays up', async () => {
    const big = `{"prompt": "${'x'.repeat(SIM_MAX_BODY_BYTES)}"}`;
    const r = await rawRequest(`${server.url}/v1/completions`, { method: 'POST', headers: json, body: big });
    expect(r.status).toBe(413);
    expect((await post(server, '/v1/completions', JSON.parse(body()))).status).toBe(200);
  });

  it('off loopback it needs a token, and then every request must carry it', async () => {
    await expect(startSimServer({ readers: PROMPT_READERS, host: '0.0.0.0' })).rejects.toThrow(
      /without a token/,
    );
    const guarded = await startSimServer({ readers: PROMPT_READERS, host: '0.0.0.0', token: 'k3y' });
    try {
      const base = `http://127.0.0.1:${guarded.port}`;
      expect((await fetch(`${base}/v1/models`)).status).toBe(401);
      const ok = await fetch(`${base}/v1/completions`, {
        method: 'POST',
        headers: { ...json, authorization: 'Bearer k3y' },
        body: body(),
      });
      expect(ok.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
