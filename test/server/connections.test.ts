import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerCli, startServerCli } from '../support/server-cli.js';
import { tempDir } from '../support/temp.js';

/**
 * One local client cannot lock the others out (issue #32, item 3): with hundreds of half-open
 * requests held against each real server command — more than its connection cap, from 127.0.0.1
 * and from 127.0.0.3 — a fresh client on 127.0.0.1 (the hoarder's own address, as every local
 * program is) and one on 127.0.0.2 are still answered.
 */

const home = tempDir('stepwise-conns-');
const started: ServerCli[] = [];
const held: Socket[] = [];
afterAll(async () => {
  for (const s of held) s.destroy();
  for (const s of started) await s.stop();
});

/** Open `count` connections from `localAddress`, each sending headers that never end. */
async function holdHalfOpen(port: number, count: number, localAddress: string): Promise<Socket[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const s = connect({ host: '127.0.0.1', port, localAddress }, () => {
            s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
            resolve(s);
          });
          s.on('error', () => resolve(s));
        }),
    ),
  );
  held.push(...sockets);
  return sockets;
}

/** GET `path` from `localAddress` on a new connection: the status, or the error code. */
function getFrom(port: number, path: string, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, localAddress, agent: false, headers: { connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

async function check(args: string[], health: string, hoard: number): Promise<void> {
  const s = await startServerCli([...args, '--port', '0'], home);
  started.push(s);
  const port = Number(new URL(s.url).port);
  await holdHalfOpen(port, hoard / 2, '127.0.0.1');
  await holdHalfOpen(port, hoard / 2, '127.0.0.3');
  // Let the server accept every one of them before the newcomers arrive.
  await new Promise((r) => setTimeout(r, 500));
  expect(await getFrom(port, health, '127.0.0.1')).toBe(200);
  expect(await getFrom(port, health, '127.0.0.2')).toBe(200);
  expect(await getFrom(port, health, '127.0.0.1')).toBe(200);
  await s.stop();
}

describe('a fresh client is served while hundreds of half-open connections are held', () => {
  it('serve (web view): 300 half-open connections', async () => {
    const dir = join(home, 'out');
    mkdirSync(dir, { recursive: true });
    await check(['serve', '--dir', dir], '/api/health', 300);
  }, 60_000);

  it('serve rewards: 300 half-open connections', async () => {
    await check(['serve', 'rewards', '--kind', 'outcome'], '/health', 300);
  }, 60_000);

  it('sim serve (cap 1024): 1100 half-open connections', async () => {
    await check(['sim', 'serve'], '/health', 1100);
  }, 60_000);
});
