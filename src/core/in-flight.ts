import { redactUrl } from './redact.js';

/**
 * Requests in flight, by server: what a job is waiting on when its progress stops. The model
 * clients note each request as it goes out and comes back (or fails); a progress display asks
 * {@link waitingOn} after a few seconds without progress and says so — "waiting on model server
 * http://… (3 requests in flight, 12 s)" — instead of a silent 0%.
 */
const counts = new Map<string, number>();

/** Note a request to `server` going out; call the returned function once it has settled. */
export function requestStarted(server: string): () => void {
  counts.set(server, (counts.get(server) ?? 0) + 1);
  let settled = false;
  return () => {
    if (settled) return;
    settled = true;
    const n = (counts.get(server) ?? 1) - 1;
    if (n <= 0) counts.delete(server);
    else counts.set(server, n);
  };
}

/** Servers with requests in flight now, most requests first (URLs with credentials redacted). */
export function requestsInFlight(): Array<{ server: string; requests: number }> {
  return [...counts]
    .map(([server, requests]) => ({ server: redactUrl(server), requests }))
    .sort((a, b) => b.requests - a.requests);
}

/** After this long without progress, a job says what it waits on. */
export const WAITING_AFTER_MS = 5000;

/**
 * What a job whose progress last moved at `since` waits on, or undefined while it is moving
 * (less than {@link WAITING_AFTER_MS} ago): the servers with requests in flight, or that no
 * request is in flight (the job's own work: tests in the sandbox, reading, a checker).
 */
export function waitingOn(since: number, now = Date.now()): string | undefined {
  const ms = now - since;
  if (ms < WAITING_AFTER_MS) return undefined;
  const seconds = `${Math.round(ms / 1000)} s`;
  const servers = requestsInFlight();
  if (servers.length === 0) return `no progress for ${seconds} (no model request in flight)`;
  const [first, ...rest] = servers;
  const n = (k: number) => `${k} request${k === 1 ? '' : 's'} in flight`;
  return (
    `waiting on model server ${first.server} (${n(first.requests)}, ${seconds})` +
    (rest.length ? ` and ${rest.length} other server${rest.length === 1 ? '' : 's'}` : '')
  );
}
