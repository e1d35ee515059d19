import { readFileSync } from 'node:fs';
import http from 'node:http';
import { listenOnLoopback } from './loopback.js';

/**
 * Conformance fixtures: request → reply pairs of a peer server (vLLM, SGLang, llama.cpp, Ollama),
 * each recorded from the real server or written from the peer's source file named in `sources`.
 * `startReplayServer` answers requests with them, so the client meets the peer's own wire format.
 */
export interface PeerFixture {
  peer: string;
  /** Where each reply comes from: the repository and file it was written from, or the build it was recorded from. */
  sources: Array<{ repo?: string; file?: string; build?: string; what: string }>;
  exchanges: Exchange[];
}

export interface Exchange {
  name: string;
  request: {
    method?: 'GET' | 'POST';
    path: string;
    /**
     * Body fields the request must carry (deep equality); `null` means the field is absent or
     * null. `$last_role` matches the role of the last chat message, `$min_prompt_chars` a raw
     * prompt at least that long, `$n_above_1` whether n > 1 was asked for.
     */
    match?: Record<string, unknown>;
  };
  reply: { status: number; body: unknown };
}

export interface ReplayedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** Name of the exchange that answered, or null when none matched (HTTP 599). */
  exchange: string | null;
  status: number;
}

export interface ReplayServer {
  url: string;
  port: number;
  requests: ReplayedRequest[];
  close(): Promise<void>;
}

const FIXTURES = new URL('../fixtures/peers/', import.meta.url);

export function loadPeerFixture(name: string): PeerFixture {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as PeerFixture;
}

function matches(body: Record<string, unknown>, match: Record<string, unknown> | undefined): boolean {
  if (!match) return true;
  for (const [key, want] of Object.entries(match)) {
    if (key === '$n_above_1') {
      if ((typeof body.n === 'number' && body.n > 1) !== want) return false;
      continue;
    }
    if (key === '$min_prompt_chars') {
      if (typeof body.prompt !== 'string' || body.prompt.length < (want as number)) return false;
      continue;
    }
    if (key === '$last_role') {
      const messages = body.messages as Array<{ role?: string }> | undefined;
      if (messages?.[messages.length - 1]?.role !== want) return false;
      continue;
    }
    const got = body[key];
    if (want === null) {
      if (got !== undefined && got !== null) return false;
    } else if (JSON.stringify(got) !== JSON.stringify(want)) return false;
  }
  return true;
}

/** Serve a fixture on a free loopback port: the first exchange whose method, path and fields match answers. */
export async function startReplayServer(fixture: PeerFixture): Promise<ReplayServer> {
  const requests: ReplayedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      const method = req.method ?? 'GET';
      let body: Record<string, unknown> = {};
      try {
        if (chunks.length)
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = {};
      }
      const hit = fixture.exchanges.find(
        (e) =>
          (e.request.method ?? 'POST') === method &&
          e.request.path === path &&
          matches(body, e.request.match),
      );
      const status = hit ? hit.reply.status : 599;
      requests.push({ method, path, body, exchange: hit?.name ?? null, status });
      const text = JSON.stringify(
        hit ? hit.reply.body : { error: { message: `no ${fixture.peer} fixture for ${method} ${path}` } },
      );
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  const { port, origin, close } = await listenOnLoopback(server);
  return { url: `${origin}/v1`, port, requests, close };
}
