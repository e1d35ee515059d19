import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';
import { tempDir } from './temp.js';

/**
 * What the "a setting added to a schema is everywhere" tests share (issue 29, acceptance 1): the
 * field they add to a method's schema, the real `stepwise` run in this process (so a `vi.mock` of
 * the schema's module is what the CLI sees), and a temporary home.
 */

/** The test's probe field, added as a developer would: an integer 2–9, default 3. */
export async function withProbe<M extends Record<string, unknown>>(original: M, key: keyof M): Promise<M> {
  const { z } = await import('zod');
  const { setting } = await import('../../src/core/settings-schema.js');
  const schema = original[key] as unknown as { extend(shape: Record<string, unknown>): unknown };
  return {
    ...original,
    [key]: schema.extend({
      probeDepth: setting(z.number().int().min(2).max(9).default(3), {
        help: 'how deep the test probe goes',
      }),
    }),
  };
}

/** The probe's flag and help line, as `--help` must print it. */
export const PROBE_HELP = /--probe-depth <n>\s+how deep the test probe goes \(default: 3\)/;
/** What validation must say of `--probe-depth 12`. */
export const PROBE_REFUSED = '--probe-depth must be an integer between 2 and 9 (got "12")';
/** The probe's row in a generated docs table. */
export const PROBE_DOCS_ROW =
  '| `--probe-depth N` | 3 | an integer between 2 and 9 | how deep the test probe goes |';

export interface Ran {
  error?: Error;
  stdout: string;
  stderr: string;
}

/** `stepwise <args>` in this process (mocked schemas are only seen here), its output captured. */
export async function stepwise(args: string[]): Promise<Ran> {
  // Imported late, so that the test file's mocks are in place first.
  const { buildProgram } = await import('../../src/cli/main.js');
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((c) => {
    stdout += String(c);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((c) => {
    stderr += String(c);
    return true;
  });
  try {
    await buildProgram().parseAsync(['node', 'stepwise', ...args]);
    return { stdout, stderr };
  } catch (e) {
    return { error: e as Error, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/**
 * A temporary folder with `home/` as STEPWISE_HOME and quiet progress for the describe block it
 * is called in; the environment is restored after it. Returns the folder (read it in a test or hook).
 */
export function useTempHome(prefix: string): () => string {
  let dir = '';
  const saved = { home: process.env.STEPWISE_HOME, quiet: process.env.STEPWISE_QUIET };
  beforeAll(() => {
    dir = tempDir(prefix);
    process.env.STEPWISE_HOME = join(dir, 'home');
    process.env.STEPWISE_QUIET = '1';
  });
  afterAll(() => {
    process.env.STEPWISE_HOME = saved.home;
    process.env.STEPWISE_QUIET = saved.quiet;
  });
  return () => dir;
}

/** The first row of a JSONL output. */
export function firstRow<T = { job: { hash: string; settings: Record<string, unknown> } }>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8').split('\n')[0] as string) as T;
}
