import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test server listening on a free loopback port, and how to stop it (open connections included). */
export interface Loopback {
  port: number;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  close: () => Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<Loopback> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
