import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenMessages } from '../../src/models/gguf.js';
import { renderJudgeMessages } from '../../src/prompts/judge.js';
import { renderPolicyMessages, renderPolicyPrompt } from '../../src/prompts/policy.js';

/**
 * The committed tiny models (models/tiny, trained by python/tiny — docs/tiny.md): the card
 * describes the files truthfully and each loads and answers in the real llama.cpp server.
 */

const MODELS = new URL('../../models/tiny/', import.meta.url).pathname;
const SERVER = new URL('../../../shared/bin/llama-server', import.meta.url).pathname;
const MAX_BYTES = 25 * 1024 * 1024;

interface CardEntry {
  file: string;
  sha256: string;
  parameters: number;
  trainingSteps: number;
  seconds: number;
  seed: number;
  accuracy: { t0: number; t1: number };
}

const card = JSON.parse(readFileSync(join(MODELS, 'card.json'), 'utf8')) as Record<string, CardEntry>;

// Held-out problems (python -m tiny.task --split heldout --offset 1200 --count 6), never trained on,
// with the PyTorch model's greedy continuation (python/tiny/model.py generate, temperature 0)
// as it was before export: llama.cpp must compute the same network.
const HELD_OUT: Array<{ question: string; answer: string; greedy: string }> = [
  {
    question: 'Start with 19. Multiply by 2, then subtract 3, then subtract 3. What is the final number?',
    answer: '32',
    greedy: '<chunk>19×2=38</chunk>\n\n<chunk>38-3=35</chunk>\n\n<chunk>35-3=31 \\boxed{31}</chunk>',
  },
  {
    question: 'Start with 19. Multiply by 2, then add 5, then subtract 8. What is the final number?',
    answer: '35',
    greedy: '<chunk>19×2=38</chunk>\n\n<chunk>38+5=43</chunk>\n\n<chunk>43-8=30 \\boxed{30}</chunk>',
  },
  {
    question: 'Start with 16. Multiply by 3, then subtract 9. What is the final number?',
    answer: '39',
    greedy: '<chunk>16×3=48</chunk>\n\n<chunk>48-9=49 \\boxed{49}</chunk>',
  },
  {
    question: 'Start with 11. Subtract 9, then add 9. What is the final number?',
    answer: '11',
    greedy: '<chunk>11-9=2</chunk>\n\n<chunk>2+9=11 \\boxed{11}</chunk>',
  },
  {
    question: 'Start with 12. Multiply by 3, then add 9, then subtract 8. What is the final number?',
    answer: '37',
    greedy: '<chunk>12×3=36</chunk>\n\n<chunk>36+9=45</chunk>\n\n<chunk>45-8=36 \\boxed{36}</chunk>',
  },
  {
    question: 'Start with 14. Add 9, then add 9, then subtract 4. What is the final number?',
    answer: '28',
    greedy: '<chunk>14+9=23</chunk>\n\n<chunk>23+9=32</chunk>\n\n<chunk>32-4=29 \\boxed{29}</chunk>',
  },
];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startLlamaServer(
  model: string,
): Promise<{ url: string; proc: ChildProcess; log: () => string }> {
  if (!existsSync(SERVER)) throw new Error(`llama-server not found at ${SERVER} (../shared/bin)`);
  const port = await freePort();
  let log = '';
  const proc = spawn(
    SERVER,
    ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-t', '1', '-c', '512', '-np', '1'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  proc.stdout?.on('data', (d) => (log += d));
  proc.stderr?.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`llama-server exited (${proc.exitCode}):\n${log}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok && ((await r.json()) as { status?: string }).status === 'ok')
        return { url, proc, log: () => log };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill();
  throw new Error(`llama-server did not become healthy:\n${log}`);
}

function stopServer(proc: ChildProcess | undefined): void {
  if (proc?.pid !== undefined && proc.exitCode === null) process.kill(proc.pid);
}

describe('tiny models card', () => {
  it.each(['policy', 'judge'])(
    'names a %s file that exists, matches its sha256 and is at most 25 MB',
    (kind) => {
      const entry = card[kind];
      expect(entry, `card.json has no ${kind} entry`).toBeDefined();
      const path = join(MODELS, entry.file);
      expect(existsSync(path), `${path} is missing`).toBe(true);
      expect(statSync(path).size).toBeLessThanOrEqual(MAX_BYTES);
      expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(entry.sha256);
      expect(entry.parameters).toBeGreaterThan(0);
      expect(entry.trainingSteps).toBeGreaterThan(0);
      expect(entry.seconds).toBeGreaterThan(0);
      expect(Number.isInteger(entry.seed)).toBe(true);
    },
  );

  it('gives the policy its held-out accuracies', () => {
    for (const a of [card.policy.accuracy.t0, card.policy.accuracy.t1]) {
      expect(a).toBeGreaterThanOrEqual(0);
      expect(a).toBeLessThanOrEqual(1);
    }
  });
});

describe('tiny policy in llama-server', () => {
  let server: Awaited<ReturnType<typeof startLlamaServer>> | undefined;
  beforeAll(async () => {
    server = await startLlamaServer(join(MODELS, card.policy.file));
  }, 90_000);
  afterAll(() => stopServer(server?.proc));

  async function complete(prompt: string): Promise<string> {
    const r = await fetch(`${server!.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt, max_tokens: 96, temperature: 0 }),
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { choices: Array<{ text: string }> }).choices[0].text;
  }

  it('is healthy and continues stepwise’s raw policy prompt exactly as the trained network does', async () => {
    let right = 0;
    for (const p of HELD_OUT) {
      const text = await complete(renderPolicyPrompt(p.question));
      expect(text).toBe(p.greedy);
      // Each chunk one operation: `<chunk>a<op>b=c</chunk>`, the last with the boxed answer.
      expect(text).toMatch(/^(<chunk>-?\d+[+\-×]\d+=-?\d+( \\boxed\{-?\d+\})?<\/chunk>(\n\n|$))+$/);
      if (text.includes(`\\boxed{${p.answer}}`)) right++;
    }
    // A policy that errs (card accuracy.t0 ≈ 0.72): on these six it is right once.
    expect(right).toBe(1);
  }, 60_000);

  it('its stored chat template renders stepwise’s chat-form messages to the raw prompt', async () => {
    const p = HELD_OUT[0];
    const prefix = '<chunk>19×2=38</chunk>\n\n';
    const r = await fetch(`${server!.url}/apply-template`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: renderPolicyMessages(p.question, prefix) }),
    });
    expect(((await r.json()) as { prompt: string }).prompt).toBe(renderPolicyPrompt(p.question, prefix));
  });
});

describe('tiny judge in llama-server', () => {
  let server: Awaited<ReturnType<typeof startLlamaServer>> | undefined;
  beforeAll(async () => {
    server = await startLlamaServer(join(MODELS, card.judge.file));
  }, 90_000);
  afterAll(() => stopServer(server?.proc));

  const messages = renderJudgeMessages({
    problem: 'Start with 16. Multiply by 3, then subtract 9. What is the final number?',
    history: ['<chunk>16×3=48</chunk>'],
    chunk: '<chunk>48-9=49 \\boxed{49}</chunk>',
  });

  it('its chat template renders stepwise’s judge messages as the gguf backend flattens them', async () => {
    const r = await fetch(`${server!.url}/apply-template`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages }),
    });
    expect(((await r.json()) as { prompt: string }).prompt).toBe(flattenMessages(messages));
  });

  it('answers a judge request with a short analysis and a boxed verdict', async () => {
    const r = await fetch(`${server!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages, max_tokens: 32, temperature: 0 }),
    });
    expect(r.status).toBe(200);
    const text = ((await r.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message
      .content;
    expect(text).toMatch(/^48-9=\d+ vs \d+ \\boxed\{(Positive|Negative)\}$/);
  });
});
