import type { Server } from 'node:http';
import { StepwiseError } from './errors.js';

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
