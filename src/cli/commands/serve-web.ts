import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startWebServer } from '../../server/app.js';
import { intOption } from '../options.js';
import { serveCommand } from './serve.js';

/** A URL a browser on this machine can open: a wildcard bind is reached through loopback. */
function browsable(url: string, host: string): string {
  return host === '0.0.0.0' || host === '::' ? url.replace(host === '::' ? '[::]' : host, '127.0.0.1') : url;
}

/** `stepwise serve`: the web view and JSON API over the store and output folders. */
export function register(program: Command): void {
  serveCommand(program)
    .option('--port <n>', 'port (0 = any free port)', intOption('--port', 0), 8484)
    .option('--host <host>', 'address to bind; anything but loopback requires --token', '127.0.0.1')
    .option(
      '--token <token>',
      'require this token (Bearer header, or open the page once with ?token=…) (or STEPWISE_TOKEN)',
    )
    .option(
      '--dir <folder...>',
      'folders whose JSON/JSONL outputs can be shown (default: the current folder)',
    )
    .option('--store <path>', 'SQLite store to read runs from (default $STEPWISE_HOME/store.sqlite)')
    .action(async (o) => {
      const token: string | undefined = o.token ?? process.env.STEPWISE_TOKEN;
      const roots: string[] = o.dir?.length ? o.dir : [process.cwd()];
      const server = await startWebServer({
        port: o.port,
        host: o.host,
        token,
        roots,
        storePath: o.store,
      });
      process.stderr.write(
        `stepwise web view on ${browsable(server.url, o.host)}/${token ? '?token=<your token>' : ''}\n` +
          `showing outputs under ${roots.map((r) => resolve(r)).join(', ')}; Ctrl-C stops it\n`,
      );
      const stop = async () => {
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
