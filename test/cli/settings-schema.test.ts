import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../support/temp.js';

/**
 * Issue 29, acceptance 1: a setting added to a method's schema appears in the flag, the help
 * (with its default), validation, `--config` replay, the settings hash and the docs table, with
 * no other edit. The label schema is extended here with one field, `probeDepth`, exactly as a
 * developer would add it to src/label/settings.ts; the real `stepwise label` is then built and run.
 */
vi.mock('../../src/label/settings.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/label/settings.js')>();
  const { z } = await import('zod');
  const { setting } = await import('../../src/core/settings-schema.js');
  return {
    ...original,
    LABEL_SETTINGS: original.LABEL_SETTINGS.extend({
      probeDepth: setting(z.number().int().min(2).max(9).default(3), {
        help: 'how deep the test probe goes',
      }),
    }),
  };
});

const { buildProgram } = await import('../../src/cli/main.js');
const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');

interface Ran {
  error?: Error;
  stdout: string;
  stderr: string;
}

/** `stepwise <args>` in this process (the mocked schema is only seen here), its output captured. */
async function stepwise(args: string[]): Promise<Ran> {
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

function firstRow(file: string): { job: { hash: string; settings: Record<string, unknown> } } {
  return JSON.parse(readFileSync(file, 'utf8').split('\n')[0] as string);
}

describe('a setting added to the label schema is everywhere, with no other edit', () => {
  let dir: string;
  const saved = { home: process.env.STEPWISE_HOME, quiet: process.env.STEPWISE_QUIET };
  beforeAll(async () => {
    dir = tempDir('stepwise-schema-');
    process.env.STEPWISE_HOME = join(dir, 'home');
    process.env.STEPWISE_QUIET = '1';
    const sampled = await stepwise([
      'sample',
      '--dataset',
      'sim',
      '--limit',
      '1',
      '--policy',
      'sim',
      '--n',
      '1',
      '--out',
      join(dir, 'S.jsonl'),
    ]);
    expect(sampled.error).toBeUndefined();
  }, 60_000);
  afterAll(() => {
    process.env.STEPWISE_HOME = saved.home;
    process.env.STEPWISE_QUIET = saved.quiet;
  });
  const label = (out: string, ...more: string[]): string[] => [
    'label',
    '--input',
    join(dir, 'S.jsonl'),
    '--dataset',
    'sim',
    '--policy',
    'sim',
    '--rollouts',
    '2',
    '--out',
    join(dir, out),
    ...more,
  ];

  it('1-2. a flag of its name, and help with its default', async () => {
    const help = await stepwise(['label', '--help']);
    expect(help.stdout).toMatch(/--probe-depth <n>\s+how deep the test probe goes \(default: 3\)/);
  });

  it('3. validation names the flag and the bounds', async () => {
    const bad = await stepwise(label('bad.jsonl', '--probe-depth', '12'));
    expect(bad.error).toBeDefined();
    expect(bad.stderr).toContain('--probe-depth must be an integer between 2 and 9 (got "12")');
  });

  it('4-5. --config replays it, and the settings hash of every row covers it', async () => {
    const byDefault = await stepwise(label('default.jsonl'));
    expect(byDefault.error).toBeUndefined();
    const plain = firstRow(join(dir, 'default.jsonl')).job;
    expect(plain.settings.probeDepth).toBe(3);

    const run = join(dir, 'run.json');
    writeFileSync(run, JSON.stringify({ command: 'label', settings: { ...plain.settings, probeDepth: 5 } }));
    const replayed = await stepwise(label('replayed.jsonl', '--config', run));
    expect(replayed.error).toBeUndefined();
    const job = firstRow(join(dir, 'replayed.jsonl')).job;
    expect(job.settings.probeDepth).toBe(5);
    expect(job.hash).not.toBe(plain.hash);
    // The same value from the flag is the same job.
    const typed = await stepwise(label('typed.jsonl', '--probe-depth', '5'));
    expect(typed.error).toBeUndefined();
    expect(firstRow(join(dir, 'typed.jsonl')).job.hash).toBe(job.hash);
  }, 60_000);

  it('6. the docs table has its row', () => {
    const found = methodSettings().find((m) => m.command === 'label');
    if (!found) throw new Error('label is not among the schema-declared methods');
    expect(settingsDocsBlock('label', found.schema)).toContain(
      '| `--probe-depth N` | 3 | an integer between 2 and 9 | how deep the test probe goes |',
    );
  });
});
