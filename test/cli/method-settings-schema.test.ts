import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  firstRow,
  PROBE_DOCS_ROW,
  PROBE_HELP,
  PROBE_REFUSED,
  stepwise,
  useTempHome,
} from '../support/settings-probe.js';
import { sharedData } from '../support/shared-data.js';

/**
 * Issue 29, acceptance 1, for `sample`, `select` and `label-code`: a setting added to the method's
 * schema appears in the flag, the help (with its default), validation, `--config` replay, the
 * settings hash and the docs table, with no other edit. Each schema is extended here with one
 * field, `probeDepth`, exactly as a developer would add it beside the method; the real commands
 * are then built and run (sim world; label-code on one MBPP problem).
 */
vi.mock('../../src/sample/settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/sample/settings.js')>(),
    'SAMPLE_SETTINGS',
  ),
);
vi.mock('../../src/train/select-settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/train/select-settings.js')>(),
    'SELECT_SETTINGS',
  ),
);
vi.mock('../../src/code/settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/code/settings.js')>(),
    'LABEL_CODE_SETTINGS',
  ),
);

const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');

/** The job record of the first row a command wrote to `out` (label-code keeps it on its parts file). */
function firstJob(command: string, out: string): { hash: string; settings: Record<string, unknown> } {
  return firstRow(command === 'label-code' ? `${out}.parts.jsonl` : out).job;
}

let dir: string;
const samples = (): string => join(dir, 'S.jsonl');

/** Each command, and the flags of one small run of it (all but `--out` and the settings). */
const COMMANDS: Record<string, () => string[]> = {
  sample: () => ['sample', '--dataset', 'sim', '--limit', '2', '--policy', 'sim', '--n', '1'],
  select: () => ['select', '--input', samples(), '--dataset', 'sim', '--judge', 'sim:generative'],
  'label-code': () => [
    'label-code',
    '--dataset',
    'mbpp',
    '--path',
    sharedData('mbpp/mbpp.jsonl'),
    '--limit',
    '1',
    '--mutants-per-problem',
    '1',
    '--max-attempts',
    '2',
  ],
};

describe('a setting added to the sample, select or label-code schema is everywhere, with no other edit', () => {
  const home = useTempHome('stepwise-method-schema-');
  beforeAll(async () => {
    dir = home();
    const sampled = await stepwise([...COMMANDS.sample!(), '--out', samples()]);
    expect(sampled.error, sampled.stderr).toBeUndefined();
  }, 120_000);

  for (const [command, args] of Object.entries(COMMANDS)) {
    describe(command, () => {
      it('1-2. a flag of its name, and help with its default', async () => {
        const help = await stepwise([command, '--help']);
        expect(help.stdout).toMatch(PROBE_HELP);
      });

      it('3. validation names the flag and the bounds', async () => {
        const bad = await stepwise([
          ...args(),
          '--probe-depth',
          '12',
          '--out',
          join(dir, `bad-${command}.jsonl`),
        ]);
        expect(bad.error).toBeDefined();
        expect(bad.stderr).toContain(PROBE_REFUSED);
      });

      it('4-5. --config replays it, and the settings hash of every row covers it', async () => {
        const file = (name: string): string => join(dir, `${command}-${name}.jsonl`);
        const byDefault = await stepwise([...args(), '--out', file('default')]);
        expect(byDefault.error, byDefault.stderr).toBeUndefined();
        const plain = firstJob(command, file('default'));
        expect(plain.settings.probeDepth).toBe(3);

        const run = join(dir, `${command}-run.json`);
        writeFileSync(run, JSON.stringify({ command, settings: { ...plain.settings, probeDepth: 5 } }));
        const replayed = await stepwise([...args(), '--config', run, '--out', file('replayed')]);
        expect(replayed.error, replayed.stderr).toBeUndefined();
        const job = firstJob(command, file('replayed'));
        expect(job.settings.probeDepth).toBe(5);
        expect(job.hash).not.toBe(plain.hash);
        // The same value from the flag is the same job.
        const typed = await stepwise([...args(), '--probe-depth', '5', '--out', file('typed')]);
        expect(typed.error, typed.stderr).toBeUndefined();
        expect(firstJob(command, file('typed')).hash).toBe(job.hash);
      }, 180_000);

      it('6. the docs table has its row', () => {
        const found = methodSettings().find((m) => m.command === command);
        if (!found) throw new Error(`${command} is not among the schema-declared methods`);
        expect(settingsDocsBlock(command, found.schema)).toContain(PROBE_DOCS_ROW);
      });
    });
  }
});
