import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyCost } from '../../src/core/cost.js';
import { connectionGuardOf } from '../../src/core/http.js';
import type { StepJudge } from '../../src/judge/types.js';
import {
  MAX_REWARD_ITEMS,
  type RunningRewardServer,
  startRewardServer,
} from '../../src/train/reward-server.js';
import { rawRequest } from '../support/raw-http.js';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/get_reward`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('reward server (OpenRLHF protocol)', () => {
  let agreement: RunningRewardServer;
  let outcome: RunningRewardServer;
  beforeAll(async () => {
    agreement = await startRewardServer({ kind: 'judge-agreement', formatPenalty: -1 });
    outcome = await startRewardServer({ kind: 'outcome' });
  });
  afterAll(async () => {
    await agreement.close();
    await outcome.close();
  });

  it('1,000 requests shaped as OpenRLHF sends them get the right rewards', async () => {
    const expected: number[] = [];
    const got: number[] = [];
    const batches = Array.from({ length: 1000 }, (_, i) => i);
    for (let start = 0; start < batches.length; start += 50) {
      await Promise.all(
        batches.slice(start, start + 50).map(async (i) => {
          const prompt = `<|im_start|>user\nJudge chunk ${i}<|im_end|>\n<|im_start|>assistant\n`;
          const label = i % 2 === 0 ? 'Positive' : 'Negative';
          const kind = i % 3; // 0: agrees, 1: disagrees, 2: no verdict
          const verdict = kind === 0 ? label : label === 'Positive' ? 'Negative' : 'Positive';
          const response =
            kind === 2 ? 'The step looks fine to me.' : `Analysis of chunk ${i}. \\boxed{${verdict}}`;
          const { status, json } = await post(agreement.url, {
            query: [prompt + response],
            prompts: [prompt],
            labels: [label],
          });
          expect(status).toBe(200);
          expected[i] = kind === 0 ? 1 : kind === 1 ? 0 : -1;
          got[i] = (json.rewards as number[])[0];
          expect((json.scores as number[])[0]).toBe(kind === 0 ? 1 : 0);
          expect((json.extra_logs as Record<string, number[]>).format_ok).toEqual([kind === 2 ? 0 : 1]);
        }),
      );
    }
    expect(got).toEqual(expected);
  });

  it('a verdict is read only from the response, even when the query does not start with the prompt', async () => {
    const { renderJudgeMessages } = await import('../../src/prompts/judge.js');
    const prompt = renderJudgeMessages({ problem: 'P', history: [], chunk: 'c' })
      .map((m) => m.content)
      .join('\n');
    const cases = [
      { query: `<bos>${prompt}I am unsure.`, prompts: [prompt] },
      {
        query: `<|im_start|>user\n${prompt}<|im_end|>\nI am unsure.`,
        prompts: ['different decoding of the prompt'],
      },
    ];
    for (const c of cases) {
      const { json } = await post(agreement.url, {
        query: [c.query],
        prompts: c.prompts,
        labels: ['Negative'],
      });
      expect(json.rewards).toEqual([-1]); // the format penalty: no verdict in the response
      expect((json.extra_logs as Record<string, number[]>).format_ok).toEqual([0]);
    }
  });

  it('a body over the size limit gets 413 with a message', async () => {
    const s = await startRewardServer({ kind: 'outcome', maxBodyBytes: 1000 });
    try {
      const { status, json } = await post(s.url, { query: ['x'.repeat(2000)], prompts: [''], labels: ['1'] });
      expect(status).toBe(413);
      expect(json.error).toMatch(/larger than 1000 bytes/);
    } finally {
      await s.close();
    }
  });

  it('a busy port is a clear error', async () => {
    await expect(startRewardServer({ kind: 'outcome', port: agreement.port })).rejects.toThrow(
      /already in use: pass another --port/,
    );
  });

  it('outcome rewards check the answer against the label', async () => {
    const { json } = await post(outcome.url, {
      query: ['Q: half? A: so \\boxed{\\frac{1}{2}}', 'Q: two? A: \\boxed{3}', 'no answer'],
      prompts: ['Q: half? A:', 'Q: two? A:', ''],
      labels: ['0.5', '2', '1'],
    });
    expect(json.rewards).toEqual([1, 0, 0]);
  });

  it('numeric labels (OpenRLHF passes the label column through unchanged) are read as their decimal text', async () => {
    const { status, json } = await post(outcome.url, {
      query: ['so \\boxed{5}', 'so \\boxed{6}', 'so \\boxed{2.5}'],
      prompts: ['', '', ''],
      labels: [5, 5, 2.5],
    });
    expect(status).toBe(200);
    expect(json.rewards).toEqual([1, 0, 1]);
  });

  it('a missing label is a 400 that says so; a label that is neither string nor number is named', async () => {
    const missing = await post(outcome.url, { query: ['\\boxed{5}'], prompts: [''] });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/"labels" is missing.*gold answer.*--data\.label_key/);
    const bad = await post(outcome.url, { query: ['a', 'b'], prompts: ['', ''], labels: ['5', null] });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/"labels"\[1\] must be a string or a number \(got null\)/);
  });

  it('malformed bodies get 400 with a message', async () => {
    for (const body of [
      'not json',
      '[1,2]',
      { query: 'x' },
      { query: ['a'], prompts: ['a', 'b'], labels: ['x'] },
      { query: [1], labels: ['x'] },
    ]) {
      const { status, json } = await post(agreement.url, body);
      expect(status).toBe(400);
      expect(typeof json.error).toBe('string');
    }
    const res = await fetch(`${agreement.url}/nope`);
    expect(res.status).toBe(404);
  });

  it('a non-loopback bind without a token refuses to start; with one, requests need it', async () => {
    await expect(startRewardServer({ kind: 'outcome', host: '0.0.0.0' })).rejects.toThrow(/without a token/);
    const s = await startRewardServer({ kind: 'outcome', host: '0.0.0.0', token: 'sekrit' });
    try {
      const url = `http://127.0.0.1:${s.port}`;
      const body = { query: ['\\boxed{1}'], prompts: [''], labels: ['1'] };
      expect((await post(url, body)).status).toBe(401);
      const ok = await post(url, body, { authorization: 'Bearer sekrit' });
      expect(ok.status).toBe(200);
      expect(ok.json.rewards).toEqual([1]);
    } finally {
      await s.close();
    }
  });

  it('the judge reward aggregates a stepwise judge over the response chunks', async () => {
    const judge: StepJudge = {
      name: 'scripted',
      scalar: true,
      async judge(_problem, chunks) {
        const judgments = chunks.map((c, i) => ({
          chunkIndex: i,
          verdict: 'positive' as const,
          score: c.includes('bad') ? 0.2 : 0.9,
        }));
        return { judgments, firstError: -1, cost: emptyCost(), formatFailures: 0 };
      },
    };
    const s = await startRewardServer({ kind: 'judge', judge, aggregate: 'min' });
    try {
      const { json } = await post(s.url, {
        query: ['P\n\ngood\n\nbad step', 'P\n\ngood'],
        prompts: ['P', 'P'],
      });
      expect(json.rewards).toEqual([0.2, 0.9]);
    } finally {
      await s.close();
    }
  });
});

describe('integrations/verl/stepwise_reward.py', () => {
  it('sends the question from extra_info (verl passes no prompt), so the judge reward sees the problem', async () => {
    const { execFile } = await import('node:child_process');
    const seen: Array<{ question: string; chunks: string[] }> = [];
    const judge: StepJudge = {
      name: 'scripted',
      scalar: true,
      async judge(problem, chunks) {
        seen.push({ question: problem.question, chunks: [...chunks] });
        const judgments = chunks.map((_c, i) => ({
          chunkIndex: i,
          verdict: 'positive' as const,
          score: 0.9,
        }));
        return { judgments, firstError: -1, cost: emptyCost(), formatFailures: 0 };
      },
    };
    const s = await startRewardServer({ kind: 'judge', judge, aggregate: 'min' });
    try {
      // verl's reward manager calls compute_score(data_source, solution_str, ground_truth, extra_info)
      // with the row's extra_info column (as `stepwise export --format verl` writes it).
      const script = [
        'import sys, json',
        "sys.path.insert(0, 'integrations/verl')",
        'import stepwise_reward as r',
        "info = {'split': 'train', 'index': 0, 'id': 'p1', 'chunk_index': -1, 'signal': 'abs-q', 'question': 'What is 2 + 3?'}",
        "print(json.dumps(r.compute_score('stepwise/judge', 'Add them.\\n\\nSo \\\\boxed{5}.', '5', info)))",
      ].join('\n');
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'python3',
          ['-c', script],
          { env: { ...process.env, STEPWISE_REWARD_URL: s.url } },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
        ),
      );
      expect(JSON.parse(out).score).toBe(0.9);
      expect(seen).toEqual([{ question: 'What is 2 + 3?', chunks: ['Add them.', 'So \\boxed{5}.'] }]);
    } finally {
      await s.close();
    }
  });

  it('compute_score calls the server and returns its reward', async () => {
    const { execFile } = await import('node:child_process');
    const s = await startRewardServer({ kind: 'judge-agreement' });
    try {
      const script = [
        'import sys, json',
        "sys.path.insert(0, 'integrations/verl')",
        'import stepwise_reward as r',
        "print(json.dumps([r.compute_score('stepwise/judge-rl', 'ok \\\\boxed{Positive}', 'Positive'), r.compute_score('stepwise/judge-rl', '\\\\boxed{Positive}', 'Negative')]))",
      ].join('\n');
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'python3',
          ['-c', script],
          { env: { ...process.env, STEPWISE_REWARD_URL: s.url } },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
        ),
      );
      expect(JSON.parse(out)).toEqual([
        { score: 1, format_ok: 1 },
        { score: 0, format_ok: 1 },
      ]);
    } finally {
      await s.close();
    }
  });
});

describe('reward server under attack', () => {
  let s: RunningRewardServer;
  beforeAll(async () => {
    s = await startRewardServer({ kind: 'outcome' });
  });
  afterAll(async () => {
    await s.close();
  });
  const valid = JSON.stringify({ query: ['so \\boxed{12}'], prompts: [''], labels: ['12'] });

  it('answers only its own host names: a DNS-rebinding Host gets 403 even with a valid JSON body', async () => {
    const evil = await rawRequest(`${s.url}/get_reward`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: `evil.example:${s.port}` },
      body: valid,
    });
    expect(evil.status).toBe(403);
    expect(evil.body).not.toContain('rewards');
    expect((await rawRequest(`${s.url}/health`, { headers: { host: 'evil.example' } })).status).toBe(403);
    const real = await rawRequest(`${s.url}/get_reward`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: valid,
    });
    expect(real.status).toBe(200);
    expect(JSON.parse(real.body).rewards).toEqual([1]);
  });

  it('a text/plain POST (what a page sends without asking) gets 415', async () => {
    for (const headers of <Record<string, string>[]>[{ 'content-type': 'text/plain' }, {}]) {
      const r = await rawRequest(`${s.url}/get_reward`, { method: 'POST', headers, body: valid });
      expect(r.status, JSON.stringify(headers)).toBe(415);
    }
  });

  it('caps samples per request with a 400 naming the limit', async () => {
    const n = MAX_REWARD_ITEMS + 1;
    const { status, json } = await post(s.url, {
      query: Array.from({ length: n }, () => 'x'),
      prompts: Array.from({ length: n }, () => ''),
      labels: Array.from({ length: n }, () => '1'),
    });
    expect(status).toBe(400);
    expect(json.error).toContain(String(MAX_REWARD_ITEMS));
    const full = await post(s.url, {
      query: Array.from({ length: MAX_REWARD_ITEMS }, () => '\\boxed{1}'),
      prompts: Array.from({ length: MAX_REWARD_ITEMS }, () => ''),
      labels: Array.from({ length: MAX_REWARD_ITEMS }, () => '1'),
    });
    expect(full.status).toBe(200);
    expect((full.json.rewards as number[]).every((r) => r === 1)).toBe(true);
  });

  it('slow requests are cut and connections capped', () => {
    expect(s.server.requestTimeout).toBe(30_000);
    expect(s.server.headersTimeout).toBe(10_000);
    expect(connectionGuardOf(s.server)?.maxConnections).toBe(256);
  });
});
