import { type ChildProcess, spawn } from 'node:child_process';

/** The built CLI entry (`npm run build` first). */
export const BIN = new URL('../../bin/stepwise.js', import.meta.url).pathname;

/** How a CLI process ended and what it printed. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Start `stepwise <args>` with its own STEPWISE_HOME and no progress bars. `child` lets a test
 * kill it midway; `done` resolves when it has closed.
 */
export function startCli(args: string[], home: string): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, STEPWISE_HOME: home, STEPWISE_QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c) => {
    stdout += c;
  });
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}
