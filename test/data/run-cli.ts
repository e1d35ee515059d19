import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';

const root = new URL('../..', import.meta.url).pathname;

/** Result of one `node bin/stepwise.js …` run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run the built CLI (`node bin/stepwise.js`, as `npx stepwise` does) from the repo root with
 * its own temporary STEPWISE_HOME. `npm test` builds first; a missing build fails loudly.
 */
export function runCli(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): CliRun {
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` before the CLI tests (npm test does)');
  // Each run gets its own store folder, removed when the run is done (tests leave nothing in /tmp).
  const home = tempDir('stepwise-home-');
  const result = spawnSync(process.execPath, [join(root, 'bin/stepwise.js'), ...args], {
    cwd: root,
    input: options.input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      STEPWISE_HOME: home,
      STEPWISE_QUIET: '1',
      ...options.env,
    },
  });
  rmSync(home, { recursive: true, force: true });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The JSON objects of a JSONL stdout. */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
