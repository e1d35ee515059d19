import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { createJudge } from '../../src/judge/create.js';
import { parseJudgePrompt } from '../../src/prompts/judge.js';
import { QWEN_PRM_SYSTEM, renderQwenPrmInput } from '../../src/prompts/prm.js';
import { providers } from '../support/providers.js';

/** A scripted OpenAI-compatible server: records every request body, answers with `reply`. */
async function scriptedServer(reply: (path: string, body: Record<string, unknown>) => unknown): Promise<{
  baseUrl: string;
  received: Array<{ path: string; body: Record<string, unknown> }>;
  server: Server;
}> {
  const received: Array<{ path: string; body: Record<string, unknown> }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => {
      const body = data === '' ? {} : JSON.parse(data);
      const path = (req.url ?? '').split('?')[0];
      received.push({ path, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply(path, body)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, received, server };
}

function chatReply(texts: string[]) {
  return {
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'judge',
    choices: texts.map((t, index) => ({
      index,
      message: { role: 'assistant', content: t },
      finish_reason: 'stop',
    })),
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20 * texts.length,
      total_tokens: 100 + 20 * texts.length,
    },
  };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const problem: Problem = {
  id: 'q1',
  question: 'Tom has 3 apples and buys 4 more. How many apples?',
  answer: '7',
  domain: 'math',
  source: 'test',
};
const chunks = ['Tom starts with 3 apples.', 'He buys 4 more: 3 + 4 = 8.', 'So he has \\boxed{8} apples.'];

describe('generative judge over HTTP', () => {
  it('each request holds the problem, all previous chunks and the new chunk; a reply without verdict is a format failure', async () => {
    const s = await scriptedServer((_path, body) => {
      const messages = body.messages as Array<{ role: string; content: string }>;
      const user = messages.find((m) => m.role === 'user')!.content;
      if (user.includes('3 + 4 = 8'))
        return chatReply(['The addition is wrong: 3 + 4 = 7. \\boxed{Negative}']);
      if (user.includes('boxed{8} apples')) return chatReply(['unused']);
      return chatReply(['I am not sure what to say here.']);
    });
    servers.push(s.server);
    const judge = await createJudge('generative:openai:judge-7b', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl, maxRetries: 0 },
    });
    const r = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(s.received).toHaveLength(2);
    expect(s.received.every((q) => q.path === '/v1/chat/completions')).toBe(true);
    const second = s.received[1].body;
    expect(second.model).toBe('judge-7b');
    const user = (second.messages as Array<{ role: string; content: string }>).find(
      (m) => m.role === 'user',
    )!.content;
    // The raw request text holds the problem, the previous chunk and the new chunk.
    expect(user).toContain(problem.question);
    expect(user).toContain(chunks[0]);
    expect(user).toContain(chunks[1]);
    expect(parseJudgePrompt(second.messages as never)).toEqual({
      problem: problem.question,
      history: [chunks[0]],
      chunk: chunks[1],
    });
    expect(second.max_tokens).toBeGreaterThan(16);
    // Chunk 0 got no verdict: counted, neutral, not an error; chunk 1 is the first error.
    expect(r.judgments[0]).toMatchObject({ verdict: 'neutral', formatFailures: 1 });
    expect(r.formatFailures).toBe(1);
    expect(r.firstError).toBe(1);
    expect(r.cost.judge).toMatchObject({ calls: 2, promptTokens: 200, completionTokens: 40 });
  });

  it('the request for the last chunk holds every previous chunk, in order', async () => {
    const s = await scriptedServer(() => chatReply(['Fine. \\boxed{Positive}']));
    servers.push(s.server);
    const judge = await createJudge('generative:openai:judge-7b', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl },
    });
    const r = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(r.firstError).toBe(-1);
    expect(s.received).toHaveLength(3);
    const byChunk = s.received.map((q) => parseJudgePrompt(q.body.messages as never)!);
    byChunk.sort((a, b) => a.history.length - b.history.length);
    byChunk.forEach((p, i) => {
      expect(p).toEqual({ problem: problem.question, history: chunks.slice(0, i), chunk: chunks[i] });
    });
    const last = JSON.stringify(s.received[2].body.messages);
    expect(last.indexOf('Tom starts with 3 apples.')).toBeLessThan(last.indexOf('He buys 4 more'));
    expect(last.indexOf('He buys 4 more')).toBeLessThan(last.indexOf('boxed{8} apples'));
  });

  it('k votes go out as one request with n = k', async () => {
    const s = await scriptedServer(() =>
      chatReply(['\\boxed{Positive}', '\\boxed{Negative}', '\\boxed{Positive}', 'x']),
    );
    servers.push(s.server);
    const judge = await createJudge('generative:openai:judge-7b?votes=4', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl },
    });
    const r = await judge.judge(problem, chunks.slice(0, 1));
    expect(s.received).toHaveLength(1);
    expect(s.received[0].body.n).toBe(4);
    // maj@k over all k = 4 votes: the unparsable reply did not say Positive.
    expect(r.judgments[0].score).toBe(2 / 4);
    expect(r.formatFailures).toBe(1);
  });
});

describe('/pooling PRM over HTTP', () => {
  it('sends {model, input} in the Qwen2.5-Math-PRM format to /pooling and maps rows to chunks in order', async () => {
    const s = await scriptedServer(() => ({
      id: 'pool-1',
      object: 'list',
      data: [
        {
          index: 0,
          object: 'pooling',
          data: [
            [0.05, 0.95],
            [0.8, 0.2],
            [0.3, 0.7],
          ],
        },
      ],
      usage: { prompt_tokens: 77, total_tokens: 77 },
    }));
    servers.push(s.server);
    const judge = await createJudge('prm:openai:Qwen/Qwen2.5-Math-PRM-7B', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl },
    });
    const r = await judge.judge(problem, chunks);
    expect(s.received).toHaveLength(1);
    expect(s.received[0].path).toBe('/pooling');
    expect(Object.keys(s.received[0].body).sort()).toEqual(['input', 'model']);
    expect(s.received[0].body.model).toBe('Qwen/Qwen2.5-Math-PRM-7B');
    const input = s.received[0].body.input as string;
    expect(input).toBe(renderQwenPrmInput(problem.question, chunks));
    // INTERFACES.md: system prompt, user = problem, assistant = steps joined by and ending with <extra_0>.
    expect(input).toContain(`<|im_start|>system\n${QWEN_PRM_SYSTEM}<|im_end|>`);
    expect(input).toContain(`<|im_start|>user\n${problem.question}<|im_end|>`);
    expect(input).toContain(`<|im_start|>assistant\n${chunks.join('<extra_0>')}<extra_0>`);
    expect(r.judgments.map((j) => [j.chunkIndex, j.score])).toEqual([
      [0, 0.95],
      [1, 0.2],
      [2, 0.7],
    ]);
    expect(r.firstError).toBe(1);
  });

  it('a row count that differs from the step count is a clear error', async () => {
    const s = await scriptedServer(() => ({ data: [{ data: [[0.1, 0.9]] }], usage: { prompt_tokens: 5 } }));
    servers.push(s.server);
    const judge = await createJudge('prm:openai:prm', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl },
    });
    await expect(judge.judge(problem, chunks)).rejects.toThrow(/1 reward rows for 3 steps/);
  });
});

describe('Math-Shepherd PRM over HTTP', () => {
  it("reads P('+') against P('-') from /v1/completions top logprobs, one request per step tag", async () => {
    const s = await scriptedServer((_path, body) => {
      const prompt = body.prompt as string;
      const steps = prompt.split('ки').length - 1;
      const good = steps === 2 ? 0.2 : 0.9;
      return {
        id: 'c',
        object: 'text_completion',
        created: 0,
        model: 'shepherd',
        choices: [
          {
            index: 0,
            text: '+',
            finish_reason: 'length',
            logprobs: {
              tokens: ['+'],
              token_logprobs: [Math.log(good)],
              top_logprobs: [{ '+': Math.log(good), '-': Math.log(1 - good - 0.01), ' ': Math.log(0.01) }],
              text_offset: [0],
            },
          },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 1, total_tokens: 41 },
      };
    });
    servers.push(s.server);
    const judge = await createJudge('shepherd:openai:math-shepherd-mistral-7b-prm', {
      providers,
      noCache: true,
      settings: { baseUrl: s.baseUrl },
    });
    const r = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(s.received.map((q) => q.path)).toEqual(['/v1/completions', '/v1/completions']);
    expect(s.received[0].body).toMatchObject({ max_tokens: 1, temperature: 0, logprobs: 20 });
    expect(s.received[0].body.prompt).toBe(`${problem.question} Step 1: ${chunks[0]} ки`);
    expect(r.judgments[0].score).toBeCloseTo(0.9 / (0.9 + 0.09), 9);
    expect(r.judgments[1].score).toBeCloseTo(0.2 / (0.2 + 0.79), 9);
    expect(r.firstError).toBe(1);
  });
});
