import type { ChildProcess } from 'node:child_process';
import { type CliRun, startCli } from './cli.js';

/** A server command (`serve`, `serve rewards`, `sim serve`) running as its own process. */
export interface ServerCli {
  /** `http://HOST:PORT`, as the server printed it. */
  url: string;
  pid: number;
  child: ChildProcess;
  /** Resolves when the process has closed. */
  done: Promise<CliRun>;
  /** SIGTERM by PID, then wait until it has exited. */
  stop(): Promise<void>;
}

/**
 * Start `stepwise <args>` (give it `--port 0`) with its own STEPWISE_HOME and resolve once it has
 * printed the address it listens on (stdout or stderr). Rejects with its stderr if it exits first.
 */
export async function startServerCli(args: string[], home: string): Promise<ServerCli> {
  const { child, done } = startCli(args, home);
  const exited = done.then((r) => {
    throw new Error(
      `stepwise ${args.join(' ')} exited (${r.code ?? r.signal}) before listening: ${r.stderr}`,
    );
  });
  exited.catch(() => {});
  const listening = new Promise<string>((resolve) => {
    let out = '';
    const look = (d: Buffer) => {
      out += String(d);
      const m = /http:\/\/(?:\[[0-9a-f:]+\]|[\w.-]+):\d+/.exec(out);
      if (m) resolve(m[0]);
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
  });
  const url = await Promise.race([listening, exited]);
  const pid = child.pid as number;
  return {
    url,
    pid,
    child,
    done,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGTERM');
      await done;
    },
  };
}
