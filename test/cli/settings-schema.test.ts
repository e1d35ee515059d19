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

/**
 * Issue 29, acceptance 1: a setting added to a method's schema appears in the flag, the help
 * (with its default), validation, `--config` replay, the settings hash and the docs table, with
 * no other edit. The label schema is extended here with one field, `probeDepth`, exactly as a
 * developer would add it to src/label/settings.ts; the real `stepwise label` is then built and run.
 */
vi.mock('../../src/label/settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/label/settings.js')>(),
    'LABEL_SETTINGS',
  ),
);

const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');

describe('a setting added to the label schema is everywhere, with no other edit', () => {
  const home = useTempHome('stepwise-schema-');
  let dir: string;
  beforeAll(async () => {
    dir = home();
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
    expect(help.stdout).toMatch(PROBE_HELP);
  });

  it('3. validation names the flag and the bounds', async () => {
    const bad = await stepwise(label('bad.jsonl', '--probe-depth', '12'));
    expect(bad.error).toBeDefined();
    expect(bad.stderr).toContain(PROBE_REFUSED);
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
    expect(settingsDocsBlock('label', found.schema)).toContain(PROBE_DOCS_ROW);
  });
});
