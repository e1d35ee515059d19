import { startCli } from './cli.js';

/** A running `stepwise sim serve` child on a free loopback port. */
export interface SimServeCli {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `http://127.0.0.1:PORT/v1`, what `--base-url` takes. */
  baseURL: string;
  pid: number;
  /** Stop the child by its PID and wait until it has exited. */
  stop(): Promise<void>;
}

/**
 * Start `stepwise sim serve --port 0` (the built CLI) with its own STEPWISE_HOME and resolve once
 * it has printed its address (its first stdout line, JSON with `url` and `baseURL`). Rejects with
 * its stderr if it exits first.
 */
export async function startSimServeCli(home: string, args: string[] = []): Promise<SimServeCli> {
  const { child, done } = startCli(['sim', 'serve', '--port', '0', ...args], home);
  const exited = done.then((r) => {
    throw new Error(`stepwise sim serve exited (${r.code ?? r.signal}) before listening: ${r.stderr}`);
  });
  const listening = new Promise<{ url: string; baseURL: string }>((resolve) => {
    let out = '';
    child.stdout?.on('data', (c) => {
      out += c;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as { url: string; baseURL: string });
    });
  });
  const address = await Promise.race([listening, exited]);
  exited.catch(() => {});
  const pid = child.pid as number;
  return {
    ...address,
    pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGTERM');
      await done;
    },
  };
}
