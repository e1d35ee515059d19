import http from 'node:http';
import https from 'node:https';

/**
 * A `fetch` for the `openai` SDK built on node:http with keep-alive agents. Node 20's global
 * fetch (undici) costs ~0.5 ms of CPU per request here, which caps a client near 1,700
 * requests/s; plain node:http with a pooled agent roughly doubles that. Only what the SDK uses
 * is supported: method, headers, a string/bytes body, an abort signal; the reply is buffered.
 */
export interface KeepAliveFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Close idle sockets (pending requests finish). */
  destroy(): void;
}

/** Error with a Node error code (ECONNRESET, ECONNREFUSED, …) from the socket layer. */
interface CodedError extends Error {
  code?: string;
}

function headerRecord(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  if (typeof (h as Headers).forEach === 'function' && !Array.isArray(h)) {
    (h as Headers).forEach((v, k) => {
      out[k] = v;
    });
  } else if (Array.isArray(h)) {
    for (const [k, v] of h) out[k] = v;
  } else {
    for (const [k, v] of Object.entries(h as Record<string, string>)) if (v !== undefined) out[k] = v;
  }
  return out;
}

function bodyBytes(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('keep-alive fetch supports only string or byte bodies');
}

/**
 * Reply headers as a read-only map. Names are lower-case (Node's); own enumerable properties are
 * the headers themselves, which is how the SDK's request logger reads a non-`Headers` object.
 */
class ReplyHeaders {
  constructor(raw: http.IncomingHttpHeaders) {
    for (const k in raw) {
      const v = raw[k];
      if (v !== undefined)
        (this as unknown as Record<string, string>)[k] = Array.isArray(v) ? v.join(', ') : v;
    }
  }
  get(name: string): string | null {
    const v = (this as unknown as Record<string, string | undefined>)[name.toLowerCase()];
    return typeof v === 'string' ? v : null;
  }
  has(name: string): boolean {
    return this.get(name) !== null;
  }
  forEach(fn: (value: string, name: string) => void): void {
    for (const [k, v] of Object.entries(this)) fn(v as string, k);
  }
  entries(): IterableIterator<[string, string]> {
    return (Object.entries(this) as Array<[string, string]>)[Symbol.iterator]();
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * A buffered reply with the part of the `Response` interface the SDK uses for non-streaming
 * calls (status, ok, headers.get, json, text). Building a WHATWG `Response` and `Headers` per
 * request was a tenth of the client's CPU time; streaming is not supported (`body` is null).
 */
class BufferedResponse {
  readonly body = null;
  readonly bodyUsed = false;
  readonly redirected = false;
  readonly type = 'basic';
  readonly headers: ReplyHeaders;
  private readonly payload: Buffer;
  constructor(
    readonly status: number,
    readonly statusText: string,
    raw: http.IncomingHttpHeaders,
    chunks: Buffer[],
    readonly url: string,
  ) {
    this.headers = new ReplyHeaders(raw);
    this.payload = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  async text(): Promise<string> {
    return this.payload.toString('utf8');
  }
  async json(): Promise<unknown> {
    return JSON.parse(this.payload.toString('utf8'));
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.payload).buffer;
  }
}

/**
 * The SDK reads an error's text only from `{"error": {"message"}}`. Peers say it other ways:
 * older vLLM and SGLang send `{"object": "error", "message", "type", "code"}` at the top level,
 * FastAPI validation errors `{"detail": …}`, Ollama `{"error": "text"}`. Those are rewritten into
 * the nested shape so the server's reason reaches the user instead of "(no body)".
 */
export function normalizeErrorBody(chunks: Buffer[]): Buffer[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return chunks;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return chunks;
  const body = parsed as Record<string, unknown>;
  let error: Record<string, unknown> | undefined;
  if (typeof body.error === 'string') error = { message: body.error };
  else if (body.error === undefined && typeof body.message === 'string')
    error = { message: body.message, type: body.type, code: body.code, param: body.param };
  else if (body.error === undefined && body.detail !== undefined)
    error = { message: typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail) };
  return error ? [Buffer.from(JSON.stringify({ error }))] : chunks;
}

/** Create a keep-alive fetch with at most `maxSockets` connections per host. */
export function createKeepAliveFetch(options: { maxSockets?: number } = {}): KeepAliveFetch {
  const maxSockets = options.maxSockets ?? 256;
  const agentOptions = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    scheduling: 'lifo' as const,
  };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);

  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url =
        typeof input === 'string' ? new URL(input) : input instanceof URL ? input : new URL(input.url);
      const isHttps = url.protocol === 'https:';
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason ?? new Error('aborted'));
        return;
      }
      const body = bodyBytes(init.body);
      const headers = headerRecord(init.headers);
      if (body !== undefined && headers['content-length'] === undefined)
        headers['content-length'] = String(
          typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
        );
      const req = (isHttps ? https : http).request(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? 'GET',
          headers,
          agent: isHttps ? httpsAgent : httpAgent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('aborted', () => fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
          res.on('end', () => {
            if (settled) return;
            settled = true;
            signal?.removeEventListener('abort', onAbort);
            resolve(
              new BufferedResponse(
                res.statusCode ?? 500,
                res.statusMessage ?? '',
                res.headers,
                (res.statusCode ?? 500) >= 400 ? normalizeErrorBody(chunks) : chunks,
                url.href,
              ) as unknown as Response,
            );
          });
        },
      );
      let settled = false;
      function fail(err: CodedError): void {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      }
      function onAbort(): void {
        const reason = signal?.reason ?? Object.assign(new Error('aborted'), { name: 'AbortError' });
        req.destroy();
        fail(reason as Error);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', fail);
      req.end(body);
    });

  const keepAliveFetch = fetchImpl as KeepAliveFetch;
  keepAliveFetch.destroy = () => {
    httpAgent.destroy();
    httpsAgent.destroy();
  };
  return keepAliveFetch;
}
