import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { listenOnLoopback } from './loopback.js';
import { sharedData } from './shared-data.js';

/**
 * The real llama.cpp server of ../shared/bin (see its README) on a free loopback port, with a
 * tiny GGUF model. A missing binary or model fails the test loudly; the server is stopped by PID.
 */
export interface LlamaServer {
  /** Base URL ending in /v1. */
  url: string;
  port: number;
  pid: number;
  /** Everything the server logged (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

export function llamaServerBinary(): string {
  const bin = join(sharedData(), '..', 'bin', 'llama-server');
  if (!existsSync(bin))
    throw new Error(
      `the real llama.cpp server is missing at ${bin}: these tests need ../shared/bin/llama-server`,
    );
  return bin;
}

async function healthy(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 1000 }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"ok"')));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

/** Start llama-server (`-t 1`, `-np slots`, default 4) and wait for `/health` to say ok. */
export async function startLlamaServer(
  options: { model?: string; slots?: number; ctx?: number; extraArgs?: string[] } = {},
): Promise<LlamaServer> {
  const bin = llamaServerBinary();
  const model = options.model ?? sharedData('tiny-gguf/stories260K.gguf');
  const port = await freePort();
  const args = ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-t', '1'];
  args.push('-np', String(options.slots ?? 4));
  if (options.ctx !== undefined) args.push('-c', String(options.ctx));
  args.push(...(options.extraArgs ?? []));
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (c: Buffer): void => {
    log = (log + c.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (!exited && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    await closed;
  };
  const deadline = Date.now() + 30_000;
  while (!(await healthy(port))) {
    if (exited) throw new Error(`llama-server exited before it was ready:\n${log.slice(-2000)}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not answer /health within 30 s:\n${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}/v1`, port, pid: child.pid!, log: () => log, stop };
}

/** One request that reached a server through {@link startRecordingProxy}. */
export interface ProxiedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  status: number;
  /** The server's reply, parsed (JSON replies only; set when it has arrived). */
  reply?: unknown;
}

/**
 * A pass-through HTTP proxy on a free loopback port that records every request it forwards
 * (what a server was sent, counted where it arrives). Replies go back unchanged.
 */
export async function startRecordingProxy(
  targetPort: number,
): Promise<{ url: string; port: number; requests: ProxiedRequest[]; close(): Promise<void> }> {
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try {
        if (raw.length) body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        body = {};
      }
      const record: ProxiedRequest = {
        method: req.method ?? 'GET',
        path: (req.url ?? '').split('?')[0],
        body,
        status: 0,
      };
      requests.push(record);
      const headers = { ...req.headers, host: `127.0.0.1:${targetPort}` };
      const up = http.request(
        { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers },
        (upRes) => {
          record.status = upRes.statusCode ?? 0;
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          const replyChunks: Buffer[] = [];
          upRes.on('data', (c: Buffer) => replyChunks.push(c));
          upRes.on('end', () => {
            try {
              record.reply = JSON.parse(Buffer.concat(replyChunks).toString('utf8'));
            } catch {
              record.reply = undefined;
            }
          });
          upRes.pipe(res);
        },
      );
      up.on('error', () => {
        record.status = 502;
        res.writeHead(502);
        res.end();
      });
      up.end(raw);
    });
  });
  const { port, origin, close } = await listenOnLoopback(server);
  return { url: `${origin}/v1`, port, requests, close };
}
