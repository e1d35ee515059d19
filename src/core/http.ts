import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { StepwiseError } from './errors.js';

/**
 * The small HTTP pieces stepwise's own servers (the web view, the reward service, the sim server)
 * share: status errors, JSON replies, size-limited bodies, token checks, loopback detection, the
 * Host allow-list, the JSON content-type check, server limits and listening.
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

/** A bind on every address of the machine. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** `host` as it appears in a Host header or URL: IPv6 addresses in brackets, lower case. */
function hostName(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * The names a server bound to `bindHost` answers to. A page on another site can reach a loopback
 * server through DNS rebinding (its own name pointed at 127.0.0.1), but its requests then carry
 * that name in Host; answering only loopback names and the bound name shuts that door. A
 * wildcard bind answers the machine's own addresses and host name.
 */
export function allowedHostNames(bindHost: string): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  if (isWildcardHost(bindHost)) {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces()))
      for (const a of list ?? []) names.add(hostName(a.address.replace(/%.*$/, '')));
  } else names.add(hostName(bindHost));
  return names;
}

/** The name part of a Host header (`[::1]:8080` → `[::1]`, `Localhost:80` → `localhost`); null when malformed. */
export function hostHeaderName(header: string | undefined): string | null {
  if (!header) return null;
  const h = header.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/.exec(h);
  return m ? m[1] : null;
}

/**
 * The host a request is addressed to: the authority of an absolute-form target
 * (`GET http://evil/ HTTP/1.1`, where HTTP says Host is ignored), else the Host header. Host sent
 * twice gives a text that is no host name (Node keeps the first, a proxy in front may use the
 * other); null when there is none or the target does not parse.
 */
function requestedHost(req: IncomingMessage): string | null {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') hosts++;
  if (hosts > 1) return 'more than one Host header';
  const target = req.url ?? '/';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    try {
      return new URL(target).host;
    } catch {
      return null;
    }
  }
  return req.headers.host ?? null;
}

/** 403 unless the request is addressed to a name of this server (see `allowedHostNames`); any port is fine (tunnels remap it). */
export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): void {
  const host = requestedHost(req);
  const name = hostHeaderName(host ?? undefined);
  if (name === null || !allowed.has(name))
    throw new HttpError(
      403,
      `this server does not answer requests for host ${JSON.stringify(host ?? '')}: open it as ${[...allowed][0]} or the --host it was started with`,
    );
}

/**
 * 415 unless the body is declared JSON. A web page can send a `text/plain` POST to any address
 * without asking (a "simple" request); it cannot send `application/json` cross-site without a
 * CORS preflight, which these servers never grant.
 */
export function requireJsonBody(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpError(
      415,
      `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : 'none'})`,
    );
}

/** Limits every stepwise server applies: slow or endless requests are cut, connections are capped. */
export const SERVER_LIMITS = {
  /** The whole request (headers and body) must arrive within this. */
  requestTimeoutMs: 30_000,
  /** The headers must arrive within this. */
  headersTimeoutMs: 10_000,
  /** Open connections at once (see {@link guardConnections}). */
  maxConnections: 256,
  /** Open connections from one remote address: half the total, so one address never holds all. */
  maxConnectionsPerClientShare: 0.5,
  /**
   * How often Node checks the two timeouts above. Its default (30 s) let a request that stalls
   * in its headers hold a connection for up to 40 s instead of 10.
   */
  checkIntervalMs: 1_000,
} as const;

/**
 * Apply `SERVER_LIMITS` to a server, and answer requests that break them (or HTTP itself) with a
 * status instead of a silent close: 408 for a request too slow, 431 for headers too large, 400
 * for the rest.
 */
export function applyServerLimits(
  server: Server,
  maxConnections: number = SERVER_LIMITS.maxConnections,
): ConnectionGuard {
  server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
  server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
  const guard = guardConnections(
    server,
    maxConnections,
    Math.max(1, Math.floor(maxConnections * SERVER_LIMITS.maxConnectionsPerClientShare)),
  );
  // Read when the server starts listening, so setting it here (before listen) takes effect.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    SERVER_LIMITS.checkIntervalMs;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const status =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });
  return guard;
}

/** The connection caps a server applies, and what it holds now. */
export interface ConnectionGuard {
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  /** Open connections now. */
  open(): number;
}

/**
 * Connection caps that one client cannot use to lock the others out: at most `total` connections
 * and `perClient` from one remote address. A client is a remote address: behind it may be many
 * programs (on loopback every local program is 127.0.0.1), so a cap per address alone cannot keep
 * a local hoarder from a local newcomer. What does: a connection that has not delivered a
 * whole request (half-open: headers or body still coming) or sits idle between keep-alive
 * requests holds no place. When a cap is reached, the oldest such connection — of the same
 * address for the per-address cap, else of the address holding the most — is closed to make room;
 * only connections whose request is complete and being answered are kept. A new connection is
 * refused only when every place is taken by a request being answered. So holding hundreds of
 * half-open connections gains nothing: each newcomer takes the place of one of them (and the
 * headers timeout closes them anyway).
 */
export function guardConnections(server: Server, total: number, perClient: number): ConnectionGuard {
  // Node's own cap refuses newcomers, which is what a hoarder wants: the guard caps instead.
  server.maxConnections = Number.POSITIVE_INFINITY;
  /** Open connections by remote address, oldest first (a Set keeps insertion order). */
  const byAddress = new Map<string, Set<Socket>>();
  /** The request a connection is answering (its response not yet finished). */
  const answering = new Map<Socket, IncomingMessage>();
  let open = 0;
  const forget = (socket: Socket, address: string): void => {
    const set = byAddress.get(address);
    if (!set?.delete(socket)) return;
    open--;
    answering.delete(socket);
    if (set.size === 0) byAddress.delete(address);
  };
  /** Whether a connection holds a whole request that is being answered (the only kind kept at a cap). */
  const answeringWhole = (socket: Socket): boolean => answering.get(socket)?.complete === true;
  /** Close the oldest connection of `set` that holds no place; false when every one is answering. */
  const evictFrom = (set: Set<Socket>, address: string): boolean => {
    for (const socket of set) {
      if (answeringWhole(socket)) continue;
      forget(socket, address);
      socket.destroy();
      return true;
    }
    return false;
  };
  const evictAnywhere = (): boolean => {
    const addresses = [...byAddress.entries()].sort((a, b) => b[1].size - a[1].size);
    return addresses.some(([address, set]) => evictFrom(set, address));
  };
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = byAddress.get(address);
    if (mine && mine.size >= perClient && !evictFrom(mine, address)) {
      socket.destroy();
      return;
    }
    if (open >= total && !evictAnywhere()) {
      socket.destroy();
      return;
    }
    let set = byAddress.get(address);
    if (!set) {
      set = new Set();
      byAddress.set(address, set);
    }
    set.add(socket);
    open++;
    socket.once('close', () => forget(socket, address));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    answering.set(socket, req);
    res.once('close', () => {
      if (answering.get(socket) === req) answering.delete(socket);
    });
  });
  const guard = { maxConnections: total, maxConnectionsPerClient: perClient, open: () => open };
  guards.set(server, guard);
  return guard;
}

const guards = new WeakMap<Server, ConnectionGuard>();

/** The connection guard applied to a server ({@link guardConnections}), if any. */
export function connectionGuardOf(server: Server): ConnectionGuard | undefined {
  return guards.get(server);
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
        // Keep reading (and dropping) the rest so the 413 reaches the client; the request
        // timeout bounds how long that may take.
        if (parts.length) parts.length = 0;
        reject(new HttpError(413, `request body larger than ${max} bytes`));
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
