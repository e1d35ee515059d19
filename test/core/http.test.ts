import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedHostNames, applyServerLimits, checkHost, type HttpError } from '../../src/core/http.js';
import { isServablePath } from '../../src/server/files.js';

/** Send `raw` as it is on a new connection; the first line of the reply, and how long it took. */
function rawExchange(port: number, raw: string, waitMs = 8_000): Promise<{ line: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let reply = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    const done = () => resolve({ line: reply.split('\r\n')[0], ms: Date.now() - t0 });
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, waitMs);
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
    socket.on('error', () => {});
  });
}

let server: Server;
let port = 0;

beforeAll(async () => {
  const hosts = allowedHostNames('127.0.0.1');
  server = createServer((req, res) => {
    try {
      checkHost(req, hosts);
      res.writeHead(200, { connection: 'close' }).end('ok');
    } catch (e) {
      res.writeHead((e as HttpError).status, { connection: 'close' }).end();
    }
  });
  applyServerLimits(server);
  // Shorter than the real limits so the test is quick; the check interval is what is under test.
  server.headersTimeout = 1_500;
  server.requestTimeout = 2_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

describe('core/http', () => {
  it('an absolute-form request target is checked by its own host, not the Host header', async () => {
    const evil = await rawExchange(port, 'GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(evil.line).toBe('HTTP/1.1 403 Forbidden');
    const local = await rawExchange(port, 'GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(local.line).toBe('HTTP/1.1 200 OK');
  });

  it('a request with two Host headers is refused, whichever comes first', async () => {
    for (const hosts of ['Host: 127.0.0.1\r\nHost: evil.example', 'Host: 127.0.0.1\r\nhost: localhost'])
      expect((await rawExchange(port, `GET / HTTP/1.1\r\n${hosts}\r\n\r\n`)).line).toBe(
        'HTTP/1.1 403 Forbidden',
      );
    expect((await rawExchange(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).line).toBe(
      'HTTP/1.1 200 OK',
    );
  });

  it('headers that stall are cut at the headers timeout, not up to 30 s later', async () => {
    const slow = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(slow.line).toBe('HTTP/1.1 408 Request Timeout');
    // Node's own check interval (30 s) used to come on top of the 1.5 s headers timeout.
    expect(slow.ms).toBeLessThan(4_500);
  }, 15_000);

  it('node_modules in any letter case is never served (case-insensitive disks)', () => {
    expect(isServablePath('node_modules/p/package.json')).toBe(false);
    expect(isServablePath('Node_Modules/p/package.json')).toBe(false);
    expect(isServablePath('NODE_MODULES\\p\\package.json')).toBe(false);
    expect(isServablePath('outputs/labels.jsonl')).toBe(true);
  });
});
