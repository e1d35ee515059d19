import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenMessages } from '../../src/models/gguf.js';
import { renderJudgeMessages } from '../../src/prompts/judge.js';
import { renderPolicyMessages, renderPolicyPrompt } from '../../src/prompts/policy.js';
import { tempDir } from '../support/temp.js';

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
// as it was before export, under each segmentation's prompt: llama.cpp must compute the same
// network. Under tags the policy groups a run of additions and subtractions into one chunk.
const HELD_OUT: Array<{ question: string; answer: string; tags: string; paragraph: string }> = [
  {
    question: 'Start with 19. Multiply by 2, then subtract 3, then subtract 3. What is the final number?',
    answer: '32',
    tags: '<chunk>19×2=38</chunk>\n<chunk>38-3=35\n35-3=32 \\boxed{32}</chunk>',
    paragraph: '19×2=38\n\n38-3=35\n\n35-3=32 \\boxed{32}',
  },
  {
    question: 'Start with 19. Multiply by 2, then add 5, then subtract 8. What is the final number?',
    answer: '35',
    tags: '<chunk>19×2=38</chunk>\n<chunk>38+5=43\n43-8=35 \\boxed{35}</chunk>',
    paragraph: '19×2=38\n\n38+5=43\n\n43-8=35 \\boxed{35}',
  },
  {
    question: 'Start with 16. Multiply by 3, then subtract 9. What is the final number?',
    answer: '39',
    tags: '<chunk>16×3=48</chunk>\n<chunk>48-9=39 \\boxed{39}</chunk>',
    paragraph: '16×3=48\n\n48-9=39 \\boxed{39}',
  },
  {
    question: 'Start with 11. Subtract 9, then add 9. What is the final number?',
    answer: '11',
    tags: '<chunk>11-9=2\n2\n22+9=31 \\boxed{31}</chunk>',
    paragraph: '11-9=2\n\n2+9=11 \\boxed{11}',
  },
  {
    question: 'Start with 12. Multiply by 3, then add 9, then subtract 8. What is the final number?',
    answer: '37',
    tags: '<chunk>12×3=36</chunk>\n<chunk>36+9=45\n45-8=37 \\boxed{37}</chunk>',
    paragraph: '12×3=36\n\n36+9=45\n\n45-8=37 \\boxed{37}',
  },
  {
    question: 'Start with 14. Add 9, then add 9, then subtract 4. What is the final number?',
    answer: '28',
    tags: '<chunk>14+9=23\n23+9=32\n32-4=28 \\boxed{28}</chunk>',
    paragraph: '14+9=23\n\n23+9=32\n\n32-4=28 \\boxed{28}',
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

  it('gives the policy held-out accuracies that leave real errors to find', () => {
    expect(card.policy.accuracy.t1).toBeGreaterThanOrEqual(0.4);
    expect(card.policy.accuracy.t1).toBeLessThanOrEqual(0.8);
    expect(card.policy.accuracy.t0).toBeGreaterThanOrEqual(card.policy.accuracy.t1);
  });
});

describe('tiny policy in llama-server', () => {
  let server: Awaited<ReturnType<typeof startLlamaServer>> | undefined;
  beforeAll(async () => {
    server = await startLlamaServer(join(MODELS, card.policy.file));
  }, 90_000);
  afterAll(() => stopServer(server?.proc));

  async function post(
    path: string,
    body: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const r = await fetch(`${server!.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  }

  async function complete(prompt: string): Promise<string> {
    const r = await post('/v1/completions', { prompt, max_tokens: 96, temperature: 0 });
    expect(r.status).toBe(200);
    return (r.json as { choices: Array<{ text: string }> }).choices[0].text;
  }

  it.each(['tags', 'paragraph'] as const)(
    'follows the %s instruction of stepwise’s raw policy prompt exactly as the trained network does',
    async (segmentation) => {
      let right = 0;
      for (const p of HELD_OUT) {
        const text = await complete(renderPolicyPrompt(p.question, '', segmentation));
        expect(text).toBe(p[segmentation]);
        if (segmentation === 'tags') expect(text).toMatch(/^<chunk>[\s\S]*<\/chunk>$/);
        else expect(text).not.toContain('<chunk>');
        if (text.includes(`\\boxed{${p.answer}}`)) right++;
      }
      // A policy that errs (card accuracy.t0 ≈ 0.8): under tags it gets one of these six wrong.
      expect(right).toBe(segmentation === 'tags' ? 5 : 6);
    },
    60_000,
  );

  it('its stored chat template renders stepwise’s chat-form messages to the raw prompt', async () => {
    const p = HELD_OUT[0];
    for (const [segmentation, prefix] of [
      ['tags', '<chunk>19×2=38</chunk>'],
      ['paragraph', '19×2=38\n\n'],
    ] as const) {
      const r = await post('/apply-template', {
        messages: renderPolicyMessages(p.question, prefix, segmentation),
      });
      expect(r.json.prompt).toBe(renderPolicyPrompt(p.question, prefix, segmentation));
    }
  });

  it('never writes a lone byte: a sampled byte-fallback token answers 200 on both endpoints', async () => {
    // Token 198 is <0xC3>, the first byte of a two-byte UTF-8 character. A network that writes it
    // alone writes invalid UTF-8, and llama-server's reply parser then answers 500 ("does not
    // match the expected Content-only format"). The GGUF stores byte tokens as UNUSED: llama.cpp
    // still reads them, but writes nothing for them.
    const prompt = renderPolicyPrompt(HELD_OUT[0].question);
    const biased = { max_tokens: 12, temperature: 1, seed: 1, logit_bias: [[198, 40]] };
    const completion = await post('/v1/completions', { prompt, ...biased });
    expect(completion.status, JSON.stringify(completion.json)).toBe(200);
    const chat = await post('/v1/chat/completions', {
      messages: renderPolicyMessages(HELD_OUT[0].question),
      ...biased,
    });
    expect(chat.status, JSON.stringify(chat.json)).toBe(200);
    // The tokenizer still reads characters outside the vocabulary, as their bytes.
    const tok = await post('/tokenize', { content: 'é' });
    expect(tok.json.tokens).toEqual([3 + 0xc3, 3 + 0xa9]);
  });
});

describe('tiny judge in llama-server', () => {
  let server: Awaited<ReturnType<typeof startLlamaServer>> | undefined;
  beforeAll(async () => {
    server = await startLlamaServer(join(MODELS, card.judge.file));
  }, 90_000);
  afterAll(() => stopServer(server?.proc));

  // A tags solution's second chunk with a slip (48-9 is 39), as stepwise's generative judge sends it.
  const messages = renderJudgeMessages({
    problem: 'Start with 16. Multiply by 3, then subtract 9. What is the final number?',
    history: ['16×3=48'],
    chunk: '48-9=49 \\boxed{49}',
    segmentation: 'tags',
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
      body: JSON.stringify({ messages, max_tokens: 48, temperature: 0 }),
    });
    expect(r.status).toBe(200);
    const text = ((await r.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message
      .content;
    // The analysis redoes the step the problem calls for (here right: 48-9=39), then the verdict.
    expect(text).toMatch(/^48-9=39 \\boxed\{39\}\n\\boxed\{(Positive|Negative)\}$/);
  });
});

describe("the committed judge's ProcessBench score", () => {
  const dir = tempDir('stepwise-tiny-pb-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the card’s `stepwise eval processbench` command, run as printed, gives the card’s numbers', () => {
    const pb = (card.judge as unknown as { processbench: Record<string, number | string> }).processbench;
    const bin = new URL('../../bin/stepwise.js', import.meta.url).pathname;
    // The command as the card prints it, from a folder where models/ is the repository's: a
    // reader who copies it gets these numbers (it once lacked the --out that --judge requires).
    const [program, ...args] = String(pb.command).split(' ');
    expect(program).toBe('stepwise');
    expect(args).toContain(`generative:gguf:models/tiny/${card.judge.file}`);
    expect(args).toContain(`models/tiny/${pb.file}`);
    symlinkSync(join(MODELS, '..'), join(dir, 'models'));
    const run = spawnSync(process.execPath, [bin, ...args, '--quiet', '--json'], {
      cwd: dir,
      env: { ...process.env, STEPWISE_HOME: join(dir, 'home') },
      encoding: 'utf8',
      timeout: 600_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(dir, args[args.indexOf('--out') + 1]))).toBe(true);
    const report = JSON.parse(run.stdout) as {
      samples: number;
      subsets: Record<string, Record<string, number>>;
    };
    const [scores] = Object.values(report.subsets);
    expect(report.samples).toBe(pb.rows);
    expect(scores.f1).toBeCloseTo(Number(pb.f1), 2);
    expect(scores.error_acc).toBeCloseTo(Number(pb.error_acc), 2);
    expect(scores.correct_acc).toBeCloseTo(Number(pb.correct_acc), 2);
  }, 600_000);
});
