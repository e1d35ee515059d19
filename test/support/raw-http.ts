import { request } from 'node:http';

/** A reply read whole. */
export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request with exactly the headers given, Host included (fetch does not let a caller
 * choose the Host header, which is what a DNS-rebinding page controls).
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: options.method ?? 'GET',
        headers: { host: u.host, connection: 'close', ...(options.headers ?? {}) },
        agent: false,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(parts).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
