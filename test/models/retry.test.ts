import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/rng.js';
import { EndpointPool } from '../../src/models/endpoints.js';
import {
  backoffDelay,
  classifyError,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
} from '../../src/models/retry.js';
import { deriveSeed, itemSeed } from '../../src/models/seeds.js';

function apiError(status: number, message: string, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, { error: { message } }, message, new Headers(headers));
}

describe('backoff and Retry-After', () => {
  it('doubles the delay per retry with jitter in [d/2, d], capped', () => {
    const rng = createRng(3);
    const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    for (let retry = 0; retry < 8; retry++) {
      const d = Math.min(1000, 100 * 2 ** retry);
      for (let i = 0; i < 20; i++) {
        const w = backoffDelay(retry, p, rng);
        expect(w).toBeGreaterThanOrEqual(d / 2);
        expect(w).toBeLessThanOrEqual(d);
      }
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '1' }))).toBe(1000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }))).toBe(500);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(new Headers())).toBeUndefined();
  });
});

describe('classifyError', () => {
  it('retries 429 (with its Retry-After), 5xx, timeouts and dropped connections; not other 4xx', () => {
    expect(classifyError(apiError(429, 'slow down', { 'retry-after': '1' }))).toMatchObject({
      kind: 'rate-limit',
      retryable: true,
      retryAfterMs: 1000,
    });
    expect(classifyError(apiError(503, 'busy'))).toMatchObject({ kind: 'server', retryable: true });
    expect(classifyError(new APIConnectionTimeoutError())).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(classifyError(new APIConnectionError({ cause: reset }))).toMatchObject({
      kind: 'connection',
      retryable: true,
    });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyError(new APIConnectionError({ cause: refused }))).toMatchObject({
      kind: 'refused',
      retryable: true,
    });
    expect(classifyError(apiError(401, 'bad key'))).toMatchObject({ kind: 'client', retryable: false });
    // Whether n > 1 is the cause is found by probing (openai.test.ts), never from the wording.
    expect(classifyError(apiError(400, 'n must be 1'))).toMatchObject({ kind: 'client', retryable: false });
    expect(classifyError(apiError(400, 'max_tokens is too large'))).toMatchObject({ kind: 'client' });
  });
});

describe('EndpointPool', () => {
  it('routes to the endpoint with the fewest requests in flight and waits at the limit', async () => {
    const pool = new EndpointPool(['a', 'b'], (u) => u, { concurrency: 2 });
    const got = [await pool.acquire(), await pool.acquire(), await pool.acquire(), await pool.acquire()];
    expect(got.map((e) => e.url)).toEqual(['a', 'b', 'a', 'b']);
    let fifth: string | undefined;
    const waiting = pool.acquire().then((e) => {
      fifth = e.url;
    });
    await Promise.resolve();
    expect(fifth).toBeUndefined();
    pool.release(got[1]);
    await waiting;
    expect(fifth).toBe('b');
  });

  it('benches an endpoint that refuses connections and probes it when all are down', async () => {
    let now = 1000;
    const pool = new EndpointPool(['a', 'b'], (u) => u, { concurrency: 4, cooldownMs: 100, now: () => now });
    const a = await pool.acquire();
    pool.release(a);
    pool.markConnectionFailure(a, true);
    expect((await pool.acquire()).url).toBe('b');
    expect((await pool.acquire()).url).toBe('b');
    const b = pool.endpoints[1];
    pool.markConnectionFailure(b, true);
    // Both benched: the one that comes back first (a) is probed.
    const probe = await pool.acquire();
    expect(probe.url).toBe('a');
    now += 150;
    pool.markAnswered(probe);
    expect(pool.anyAlive()).toBe(true);
  });
});

describe('seeds', () => {
  it('keeps the seed for block 0 and derives distinct, stable seeds for later blocks', () => {
    expect(deriveSeed(undefined, 3)).toBeUndefined();
    expect(deriveSeed(42, 0)).toBe(42);
    const s = [1, 2, 3].map((i) => deriveSeed(42, i));
    expect(new Set([42, ...s]).size).toBe(4);
    expect(deriveSeed(42, 2)).toBe(s[1]);
    expect(s.every((x) => x !== undefined && x >= 0 && x < 2 ** 31)).toBe(true);
    expect(itemSeed(1, 'gsm8k/test/0')).not.toBe(itemSeed(1, 'gsm8k/test/1'));
    expect(itemSeed(1, 'a')).toBe(itemSeed(1, 'a'));
  });
});
