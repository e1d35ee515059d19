import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { StepwiseError } from './errors.js';

/**
 * The small HTTP pieces stepwise's own servers (the web view, the reward service) share: status
 * errors, JSON replies, size-limited bodies, token checks, loopback detection and listening.
 */

/** An error answered as `{error}` JSON with its HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** True for 127.0.0.0/8, ::1 and localhost: the binds that need no token. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

/** The request body as text; an `HttpError(413)` once it passes `max` bytes (declared or sent). */
export function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      reject(new HttpError(413, `request body larger than ${max} bytes`));
      req.resume();
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > max) {
        reject(new HttpError(413, `request body larger than ${max} bytes`));
        req.destroy();
        return;
      }
      parts.push(d);
    });
    req.on('end', () => resolveBody(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Token check in constant time (no early exit on the first differing character). */
export function sameToken(given: string | null | undefined, expected: string): boolean {
  if (given === null || given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Listen on `host:port`, turning the errors a user causes (port taken, address not on this
 * machine, port needing privileges) into messages that say what to do, with exit code 2.
 */
export function listenOrExplain(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why =
        e.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is already in use: pass another --port (0 picks a free one)`
          : e.code === 'EADDRNOTAVAIL'
            ? `${host} is not an address of this machine: pass --host 127.0.0.1 or one of its addresses`
            : e.code === 'EACCES'
              ? `no permission to listen on ${where}: use a port above 1023`
              : null;
      reject(why ? new StepwiseError(why, { exitCode: 2 }) : e);
    });
    server.listen(port, host, () => resolve());
  });
}
