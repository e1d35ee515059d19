import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runRecords } from '../support/cli.js';
import {
  PROBE_DOCS_ROW,
  PROBE_HELP,
  PROBE_REFUSED,
  stepwise,
  useTempHome,
} from '../support/settings-probe.js';
import { labelRows } from '../train/export-fixtures.js';

/**
 * Export's settings are a schema too (issue 29, items 1 and 5): a field added to EXPORT_SETTINGS
 * (src/train/export-settings.ts), exactly as a developer would add it, is a flag with its default
 * in help, validated naming the flag, replayed by `--config`, recorded and hashed in the run
 * record, and in the docs table, with no other edit. The real `stepwise export` runs in process.
 */
vi.mock('../../src/train/export-settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/train/export-settings.js')>(),
    'EXPORT_SETTINGS',
  ),
);

const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');

interface RunRecord {
  output: string;
  config: { job: { command: string; hash: string; settings: Record<string, unknown> } };
}

describe('a setting added to the export schema is everywhere, with no other edit', () => {
  const home = useTempHome('stepwise-export-settings-');
  let dir: string;
  let labels: string;
  beforeAll(() => {
    dir = home();
    labels = join(dir, 'labels.jsonl');
    writeFileSync(
      labels,
      `${labelRows(12)
        .map((r) => JSON.stringify(r))
        .join('\n')}\n`,
    );
  });
  const exportArgs = (out: string, ...more: string[]): string[] => [
    'export',
    '--input',
    labels,
    '--task',
    'prm',
    '--format',
    'trl',
    '--out',
    join(dir, out),
    ...more,
  ];
  /** The run record of the export that wrote `out`. */
  async function runOf(out: string): Promise<RunRecord> {
    const ran = await stepwise(['runs', '--json']);
    expect(ran.error).toBeUndefined();
    const runs = runRecords<RunRecord>(ran.stdout);
    const run = runs.find((r) => r.output === join(dir, out));
    if (!run) throw new Error(`no run record of ${out}`);
    return run;
  }

  it('1-2. a flag of its name, and help with its default', async () => {
    const help = await stepwise(['export', '--help']);
    expect(help.stdout).toMatch(PROBE_HELP);
  });

  it('3. validation names the flag and the bounds (exit 2, nothing written)', async () => {
    const bad = await stepwise(exportArgs('bad.jsonl', '--probe-depth', '12'));
    expect(bad.error).toBeDefined();
    expect(bad.stderr).toContain(PROBE_REFUSED);
  });

  it('4-5. --config replays it, and the settings hash of the run record covers it', async () => {
    expect((await stepwise(exportArgs('default.jsonl'))).error).toBeUndefined();
    const plain = (await runOf('default.jsonl')).config.job;
    expect(plain.command).toBe('export');
    expect(plain.settings.probeDepth).toBe(3);

    const run = join(dir, 'run.json');
    writeFileSync(run, JSON.stringify({ command: 'export', settings: { ...plain.settings, probeDepth: 5 } }));
    const replayed = await stepwise([
      'export',
      '--input',
      labels,
      '--out',
      join(dir, 'replayed.jsonl'),
      '--config',
      run,
    ]);
    expect(replayed.error).toBeUndefined();
    const job = (await runOf('replayed.jsonl')).config.job;
    expect(job.settings).toEqual({ ...plain.settings, probeDepth: 5 });
    expect(job.hash).not.toBe(plain.hash);
    // The replayed settings wrote the same rows (task, format and signal came from the record).
    expect(readFileSync(join(dir, 'replayed.jsonl'), 'utf8')).toBe(
      readFileSync(join(dir, 'default.jsonl'), 'utf8'),
    );
    // The same value from the flag is the same job.
    expect((await stepwise(exportArgs('typed.jsonl', '--probe-depth', '5'))).error).toBeUndefined();
    expect((await runOf('typed.jsonl')).config.job.hash).toBe(job.hash);
  }, 60_000);

  it('6. the docs table has its row', () => {
    const found = methodSettings().find((m) => m.command === 'export');
    if (!found) throw new Error('export is not among the schema-declared methods');
    expect(settingsDocsBlock('export', found.schema)).toContain(PROBE_DOCS_ROW);
  });
});
