/**
 * Several server endpoints behind one model: least-outstanding routing, a concurrency limit per
 * endpoint, and failover — an endpoint whose connections fail is benched for a cooldown while
 * the others take its traffic, then probed again.
 */

/** One server base URL and its live state. */
export interface Endpoint<C = unknown> {
  readonly url: string;
  /** Per-endpoint client (an SDK instance, …). */
  readonly client: C;
  /** Requests in flight. */
  outstanding: number;
  /** Benched until this time (ms since epoch); 0 = alive. */
  deadUntil: number;
  /** Connection failures in a row. */
  failures: number;
  /** Ever answered (any HTTP status). */
  answered: boolean;
  /** Whether the server honours n > 1 in one request; undefined until known. */
  nativeN?: boolean;
  /**
   * The most samples one request may ask for, when the server has a limit below what was asked
   * (llama.cpp: its slot count, `-np`); larger n is sent as several requests of at most this many.
   */
  maxN?: number;
  /**
   * Set while one request probes whether n > 1 works: until it is known, the other requests with
   * n > 1 wait for it, so a server that rejects n sees one rejected request, not one per caller.
   */
  nProbe?: Promise<void>;
}

export interface EndpointPoolOptions {
  /** Requests in flight per endpoint. */
  concurrency: number;
  /** Connection failures in a row that bench an endpoint. */
  failuresToBench?: number;
  /** First cooldown; doubles with every further failure while benched, up to `maxCooldownMs`. */
  cooldownMs?: number;
  maxCooldownMs?: number;
  now?: () => number;
}

interface Waiter<C> {
  resolve: (e: Endpoint<C>) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class EndpointPool<C = unknown> {
  readonly endpoints: Endpoint<C>[];
  private readonly concurrency: number;
  private readonly failuresToBench: number;
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly now: () => number;
  private readonly waiters: Waiter<C>[] = [];

  constructor(urls: string[], makeClient: (url: string) => C, options: EndpointPoolOptions) {
    if (urls.length === 0) throw new Error('EndpointPool needs at least one URL');
    this.endpoints = urls.map((url) => ({
      url,
      client: makeClient(url),
      outstanding: 0,
      deadUntil: 0,
      failures: 0,
      answered: false,
    }));
    this.concurrency = Math.max(1, options.concurrency);
    this.failuresToBench = options.failuresToBench ?? 2;
    this.cooldownMs = options.cooldownMs ?? 1_000;
    this.maxCooldownMs = options.maxCooldownMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The endpoint to use now: among those with a free slot, alive ones first, then the fewest
   * requests in flight. When every endpoint is benched the one that comes back soonest is used
   * (a probe), so a job never stalls on a pool that is all down. Null when no slot is free.
   */
  private pick(): Endpoint<C> | null {
    const now = this.now();
    let best: Endpoint<C> | null = null;
    let bestAlive = false;
    for (const e of this.endpoints) {
      if (e.outstanding >= this.concurrency) continue;
      const alive = e.deadUntil <= now;
      if (
        best === null ||
        (alive && !bestAlive) ||
        (alive === bestAlive && (alive ? e.outstanding < best.outstanding : e.deadUntil < best.deadUntil))
      ) {
        best = e;
        bestAlive = alive;
      }
    }
    // A benched endpoint with a free slot is only used when no alive one exists at all.
    if (best && !bestAlive && this.endpoints.some((e) => e.deadUntil <= now)) return null;
    return best;
  }

  /** Take a slot on the best endpoint, waiting for one to free up. Call `release` after. */
  acquire(signal?: AbortSignal): Promise<Endpoint<C>> {
    if (this.waiters.length === 0) {
      const e = this.pick();
      if (e) {
        e.outstanding++;
        return Promise.resolve(e);
      }
    }
    return new Promise<Endpoint<C>>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason ?? new Error('aborted'));
        return;
      }
      const waiter: Waiter<C> = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason ?? new Error('aborted'));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  /** Free a slot and hand it to the next waiter. */
  release(e: Endpoint<C>): void {
    e.outstanding--;
    while (this.waiters.length > 0) {
      const next = this.pick();
      if (!next) return;
      const w = this.waiters.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
      next.outstanding++;
      w.resolve(next);
    }
  }

  /** The endpoint answered (any HTTP status): it is alive. */
  markAnswered(e: Endpoint<C>): void {
    e.answered = true;
    e.failures = 0;
    e.deadUntil = 0;
  }

  /** A connection-level failure (refused, reset, timeout). Refused benches at once. */
  markConnectionFailure(e: Endpoint<C>, refused: boolean): void {
    e.failures++;
    if (refused || e.failures >= this.failuresToBench) {
      const extra = Math.max(0, e.failures - this.failuresToBench);
      e.deadUntil = this.now() + Math.min(this.maxCooldownMs, this.cooldownMs * 2 ** extra);
    }
  }

  /** True when at least one endpoint is not benched. */
  anyAlive(): boolean {
    const now = this.now();
    return this.endpoints.some((e) => e.deadUntil <= now);
  }

  /** Reject everyone waiting (on close). */
  rejectWaiters(err: unknown): void {
    for (const w of this.waiters.splice(0)) w.reject(err);
  }
}
