import { type ChildProcess, spawn } from 'node:child_process';
import type { RunRecord } from '../../src/store/runs.js';

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
 * Start `stepwise <args>` with its own STEPWISE_HOME and no progress bars (`nodeArgs` go to node
 * before the entry). `child` lets a test kill it midway; `done` resolves when it has closed.
 */
export function startCli(
  args: string[],
  home: string,
  nodeArgs: string[] = [],
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
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

/** Makes the child print its peak RSS (KiB) on stderr as it exits. */
const PEAK_RSS_HOOK =
  'data:text/javascript,import fs from "node:fs"; process.on("exit", () => fs.writeSync(2, "\\nMAXRSS_KB " + process.resourceUsage().maxRSS + "\\n"));';

/**
 * Run `stepwise <args>` (as {@link startCli}) and stop it with SIGINT, like Ctrl-C, once
 * `stopWhen()` holds (checked every `pollMs`). How it ended, and its peak RSS in MB.
 */
export async function runUntilStopped(
  args: string[],
  home: string,
  stopWhen: () => boolean,
  pollMs: number,
  nodeArgs: string[] = [],
): Promise<CliRun & { rssMb: number }> {
  const { child, done } = startCli(args, home, [...nodeArgs, '--import', PEAK_RSS_HOOK]);
  // One Ctrl-C, as a user presses it: a second one would cut short a command that stops gracefully.
  const timer = setInterval(() => {
    if (!stopWhen()) return;
    clearInterval(timer);
    child.kill('SIGINT');
  }, pollMs);
  const run = await done;
  clearInterval(timer);
  return { ...run, rssMb: Number(/MAXRSS_KB (\d+)/.exec(run.stderr)?.[1]) / 1024 };
}

/** The run records in the output of `stepwise runs --json` (one JSON object a line). */
export function runRecords<T = RunRecord>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

/** The run records of `stepwise runs --json <filters>` in `home` (the listing must succeed). */
export async function runsOf(home: string, ...filters: string[]): Promise<RunRecord[]> {
  const listed = await startCli(['runs', '--json', ...filters], home).done;
  if (listed.code !== 0) throw new Error(`stepwise runs --json failed (${listed.code}): ${listed.stderr}`);
  return runRecords(listed.stdout);
}
