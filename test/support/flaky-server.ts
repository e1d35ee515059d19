import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createRng } from '../../src/core/rng.js';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';

/**
 * An OpenAI-compatible test server on 127.0.0.1 that misbehaves on purpose: by default 20% of
 * requests get HTTP 500, 10% get 429 with `Retry-After: 1`, 5% have their connection dropped
 * without a reply and 5% are answered after 5 s. Faults are drawn from a seeded generator.
 * Answers are short step-by-step solutions ending in `\boxed{}`; with `answerFor` the boxed
 * value is the gold answer with probability `correctRate`.
 *
 * Run it by hand: `npx tsx test/support/flaky-server.ts [--port P] [--gsm8k FILE]` prints its base URL.
 */
export interface FlakyServerOptions {
  port?: number;
  seed?: number;
  rate500?: number;
  rate429?: number;
  dropRate?: number;
  delayRate?: number;
  delayMs?: number;
  /** Fixed latency added to every answered request. */
  latencyMs?: number;
  /**
   * false: reject n > 1 with HTTP 400 "n must be 1"; 'ignore': answer one choice (Ollama);
   * 'error500': HTTP 500 "Only one completion choice is allowed" (older llama.cpp).
   */
  nativeN?: true | false | 'ignore' | 'error500';
  answerFor?: (question: string) => string | undefined;
  correctRate?: number;
}

export interface RecordedRequest {
  path: string;
  body: Record<string, unknown>;
  /** The policy question parsed from the prompt, when it is one. */
  question: string | null;
  outcome: 'ok' | '500' | '429' | 'drop' | 'delay' | 'bad-request' | 'n-rejected';
}

export interface FlakyServer {
  /** Base URL ending in /v1. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Stop faults (every request answered at once) or restore them. */
  setFaults(on: boolean): void;
  close(): Promise<void>;
}

function solutionText(rng: ReturnType<typeof createRng>, answer: string): string {
  const a = rng.int(2, 9);
  const b = rng.int(2, 9);
  return `First, ${a} + ${b} = ${a + b}.\n\nThen we use that to finish the problem.\n\nThe answer is \\boxed{${answer}}.`;
}

export async function startFlakyServer(options: FlakyServerOptions = {}): Promise<FlakyServer> {
  const rate500 = options.rate500 ?? 0.2;
  const rate429 = options.rate429 ?? 0.1;
  const dropRate = options.dropRate ?? 0.05;
  const delayRate = options.delayRate ?? 0.05;
  const delayMs = options.delayMs ?? 5000;
  // Faults and unseeded answers draw from separate streams, so the fault sequence depends only on the seed.
  const rng = createRng(options.seed ?? 1);
  const contentRng = createRng(`content:${options.seed ?? 1}`);
  const requests: RecordedRequest[] = [];
  let faults = true;
  const sockets = new Set<import('node:net').Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length
          ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>)
          : {};
      } catch {
        body = {};
      }
      const promptInput =
        typeof body.prompt === 'string'
          ? body.prompt
          : Array.isArray(body.messages)
            ? (body.messages as Array<{ role: 'user'; content: string }>)
            : null;
      const question = promptInput ? (parsePolicyPrompt(promptInput)?.question ?? null) : null;
      const record: RecordedRequest = { path, body, question, outcome: 'ok' };
      requests.push(record);
      const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
        const text = JSON.stringify(value);
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(text)),
          ...headers,
        });
        res.end(text);
      };
      if (req.method === 'GET' && path === '/v1/models') {
        json(200, { object: 'list', data: [{ id: 'm', object: 'model' }] });
        return;
      }
      const u = faults ? rng.next() : 1;
      if (u < rate500) {
        record.outcome = '500';
        json(500, { error: { message: 'injected server error', type: 'server_error' } });
        return;
      }
      if (u < rate500 + rate429) {
        record.outcome = '429';
        json(429, { error: { message: 'injected rate limit', type: 'rate_limit' } }, { 'retry-after': '1' });
        return;
      }
      if (u < rate500 + rate429 + dropRate) {
        record.outcome = 'drop';
        req.socket.destroy();
        return;
      }
      const delayed = u < rate500 + rate429 + dropRate + delayRate;
      if (delayed) record.outcome = 'delay';
      const answer = (): void => {
        const n = typeof body.n === 'number' ? body.n : 1;
        if (n > 1 && options.nativeN === false) {
          record.outcome = 'bad-request';
          json(400, { error: { message: 'n must be 1 for this server', type: 'invalid_request_error' } });
          return;
        }
        if (n > 1 && options.nativeN === 'error500') {
          record.outcome = 'n-rejected';
          json(500, {
            error: { code: 500, message: 'Only one completion choice is allowed', type: 'server_error' },
          });
          return;
        }
        const count = n > 1 && options.nativeN === 'ignore' ? 1 : n;
        const seedRng = createRng(
          typeof body.seed === 'number' ? body.seed : Math.floor(contentRng.next() * 2 ** 31),
        );
        if (path === '/pooling') {
          json(200, {
            data: [
              {
                data: [
                  [0.2, 0.8],
                  [0.6, 0.4],
                ],
              },
            ],
            usage: { prompt_tokens: 7 },
          });
          return;
        }
        if (path === '/v1/completions' && body.echo === true && typeof body.prompt === 'string') {
          // Word tokens with logprob −1 each; then one generated token.
          const text = body.prompt;
          const tokens: string[] = [];
          const offsets: number[] = [];
          const re = /\s*\S+/g;
          for (let m = re.exec(text); m; m = re.exec(text)) {
            tokens.push(m[0]);
            offsets.push(m.index);
          }
          tokens.push(' end');
          offsets.push(text.length);
          json(200, {
            choices: [
              {
                index: 0,
                text: `${text} end`,
                finish_reason: 'length',
                logprobs: {
                  tokens,
                  token_logprobs: tokens.map((_, i) => (i === 0 ? null : -1)),
                  text_offset: offsets,
                  top_logprobs: null,
                },
              },
            ],
            usage: { prompt_tokens: tokens.length - 1, completion_tokens: 1, total_tokens: tokens.length },
          });
          return;
        }
        const gold = question && options.answerFor ? options.answerFor(question) : undefined;
        const choices = Array.from({ length: count }, (_, index) => {
          const right = gold !== undefined && seedRng.chance(options.correctRate ?? 0.5);
          const text = solutionText(seedRng, right ? gold : String(seedRng.int(1000, 9999)));
          return path === '/v1/chat/completions'
            ? {
                index,
                message: { role: 'assistant', content: text },
                finish_reason: 'stop',
                stop_reason: null,
              }
            : { index, text, finish_reason: 'stop', stop_reason: null, logprobs: null };
        });
        json(200, {
          id: `cmpl-${requests.length}`,
          object: path === '/v1/chat/completions' ? 'chat.completion' : 'text_completion',
          model: body.model,
          choices,
          usage: { prompt_tokens: 50, completion_tokens: 20 * count, total_tokens: 50 + 20 * count },
        });
      };
      const wait = (delayed ? delayMs : 0) + (options.latencyMs ?? 0);
      if (wait > 0) setTimeout(answer, wait);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setFaults(on) {
      faults = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// Run by hand: print the base URL and a running count of requests on stderr.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  // --gsm8k FILE: answer each GSM8K question correctly half of the time.
  const gsm8k = arg('--gsm8k');
  const gold = new Map<string, string>();
  if (gsm8k) {
    const { loadProblems } = await import('../../src/data/load.js');
    for (const p of (await loadProblems('gsm8k', { path: gsm8k })).problems) gold.set(p.question, p.answer);
  }
  const server = await startFlakyServer({ port: Number(arg('--port') ?? 0), answerFor: (q) => gold.get(q) });
  process.stdout.write(`${server.url}\n`);
  setInterval(() => {
    const by: Record<string, number> = {};
    for (const r of server.requests) by[r.outcome] = (by[r.outcome] ?? 0) + 1;
    process.stderr.write(`requests: ${server.requests.length} ${JSON.stringify(by)}\n`);
  }, 5000).unref();
}
