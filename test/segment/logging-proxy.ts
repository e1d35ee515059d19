import http from 'node:http';
import { listenOnLoopback } from '../support/loopback.js';

/** A request that went through the proxy: its path and JSON body. */
export interface ProxiedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/**
 * A loopback HTTP proxy that forwards every request to `target` unchanged and records what was
 * sent, so a test can check exactly what the CLI asked of a real `stepwise sim serve`.
 */
export async function startLoggingProxy(
  target: string,
): Promise<{ url: string; requests: ProxiedRequest[]; close(): Promise<void> }> {
  const to = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      let body: Record<string, unknown> = {};
      try {
        body = raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      requests.push({ method: req.method ?? 'GET', path: req.url ?? '', body });
      const upstream = http.request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: to.host },
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      upstream.on('error', (e) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(e) } }));
      });
      upstream.end(raw);
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { url: origin, requests, close };
}
