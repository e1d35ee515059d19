import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';

/**
 * A scripted OpenAI-compatible `/v1/completions` server on 127.0.0.1 for the labeling tests.
 * Each rollout's text comes from `rollout(question, prefix, seed, index)`; every request is
 * logged; `nativeN: false` rejects n > 1 with HTTP 400 like servers without `n` do; `stall()`
 * holds every later request unanswered (to kill a client mid-run with nothing in flight that
 * could still be answered).
 */
export interface ScriptedServerOptions {
  nativeN?: boolean;
  rollout: (question: string, prefix: string, seed: number | undefined, index: number) => string;
  /** Delay before each answer (ms). */
  latencyMs?: number;
  /** Stall automatically (once) when this many requests have been answered. */
  stallAfter?: number;
}

export interface LoggedRequest {
  question: string;
  prefix: string;
  n: number;
  seed: number | undefined;
  /** `ok` answered; `rejected` 400 for n > 1; `held` never answered (stalled). */
  outcome: 'ok' | 'rejected' | 'held';
  /** Identity of the request: prompt, n and seed. */
  key: string;
}

export interface ScriptedServer {
  url: string;
  requests: LoggedRequest[];
  answered(): LoggedRequest[];
  /** Resolves when the server has stalled (with `stallAfter`). */
  stalled: Promise<void>;
  stall(): void;
  /** Answer new requests again (held ones stay unanswered: their client is gone). */
  resume(): void;
  close(): Promise<void>;
}

export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const requests: LoggedRequest[] = [];
  const held: http.ServerResponse[] = [];
  let stalling = false;
  // `stallAfter` stalls once; after `resume()` the server answers for good.
  let autoStalled = false;
  let onStall: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    onStall = resolve;
  });
  const stall = () => {
    stalling = true;
    onStall();
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', async () => {
      const body = JSON.parse(raw || '{}') as { prompt?: string; n?: number; seed?: number };
      const parsed = req.url === '/v1/completions' && body.prompt ? parsePolicyPrompt(body.prompt) : null;
      if (!parsed) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `not a policy completion: ${req.url}` } }));
        return;
      }
      const n = body.n ?? 1;
      const entry: LoggedRequest = {
        question: parsed.question,
        prefix: parsed.prefix,
        n,
        seed: body.seed,
        outcome: 'ok',
        key: JSON.stringify([body.prompt, n, body.seed]),
      };
      requests.push(entry);
      if (stalling) {
        entry.outcome = 'held';
        held.push(res);
        return;
      }
      if (n > 1 && options.nativeN === false) {
        entry.outcome = 'rejected';
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: 'n > 1 is not supported: n must be 1', type: 'invalid_request_error' },
          }),
        );
        return;
      }
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      const choices = Array.from({ length: n }, (_, index) => ({
        index,
        text: options.rollout(parsed.question, parsed.prefix, body.seed, index),
        finish_reason: 'stop',
      }));
      const completion = choices.reduce((a, c) => a + c.text.split(/\s+/).length, 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `cmpl-${requests.length}`,
          object: 'text_completion',
          model: 'policy',
          choices,
          usage: { prompt_tokens: 20, completion_tokens: completion, total_tokens: 20 + completion },
        }),
      );
      if (
        !autoStalled &&
        options.stallAfter !== undefined &&
        requests.filter((r) => r.outcome === 'ok').length >= options.stallAfter
      ) {
        autoStalled = true;
        stall();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    answered: () => requests.filter((r) => r.outcome === 'ok'),
    stalled,
    stall,
    resume: () => {
      stalling = false;
    },
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
