import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { firstRow, PROBE_REFUSED, stepwise, useTempHome } from '../support/settings-probe.js';

/**
 * Issue 29, acceptance 1, for search: a setting added to one strategy's schema appears in the flag
 * (of `search` and `bench search`), the help (with its default and its strategy's name),
 * validation, `--config` replay, the settings hash and the docs table, with no other edit. Beam's
 * schema is extended here with one field, `probeDepth`, exactly as a developer would add it to
 * src/search/beam.ts; the real `stepwise search` is then built and run.
 */
vi.mock('../../src/search/beam.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/search/beam.js')>(),
    'BEAM_SETTINGS',
  ),
);

const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');
const { resolveSearchConfig } = await import('../../src/search/registry.js');
const { openStore } = await import('../../src/store/db.js');
const { listRuns } = await import('../../src/store/runs.js');

describe("a setting added to one strategy's schema is everywhere on search, with no other edit", () => {
  const home = useTempHome('stepwise-search-schema-');
  let dir: string;
  beforeAll(() => {
    dir = home();
  });
  const search = (out: string, ...more: string[]): string[] => [
    'search',
    '--dataset',
    'sim',
    '--limit',
    '2',
    '--policy',
    'sim',
    '--judge',
    'sim:generative',
    '--strategy',
    'beam',
    '--n',
    '2',
    '--out',
    join(dir, out),
    ...more,
  ];

  it("1-2. a flag of its name on search and bench search, its help with its default and its strategy's name", async () => {
    for (const command of [['search'], ['bench', 'search']]) {
      const help = await stepwise([...command, '--help']);
      expect(help.stdout).toMatch(/--probe-depth <n>\s+beam: how deep the test probe goes \(default: 3\)/);
    }
  });

  it('3. validation names the flag and the bounds; the library fills the default', async () => {
    const bad = await stepwise(search('bad.jsonl', '--probe-depth', '12'));
    expect(bad.error).toBeDefined();
    expect(bad.stderr).toContain(PROBE_REFUSED);
    expect((resolveSearchConfig({}) as Record<string, unknown>).probeDepth).toBe(3);
    expect(() => resolveSearchConfig({ probeDepth: 1 } as never)).toThrow(
      'search config: probeDepth must be an integer between 2 and 9 (got 1)',
    );
  });

  it('4-5. --config replays it, and the settings hash covers it; a refused rerun starts no run', async () => {
    const byDefault = await stepwise(search('default.jsonl'));
    expect(byDefault.error, byDefault.stderr).toBeUndefined();
    const plain = firstRow(join(dir, 'default.jsonl')).job;
    // As every search setting: recorded when set, so a file resumes whatever a default becomes.
    expect(plain.settings.probeDepth).toBeUndefined();

    const typed = await stepwise(search('typed.jsonl', '--probe-depth', '5'));
    expect(typed.error, typed.stderr).toBeUndefined();
    const job = firstRow(join(dir, 'typed.jsonl')).job;
    expect(job.settings.probeDepth).toBe(5);
    expect(job.hash).not.toBe(plain.hash);

    const run = join(dir, 'run.json');
    writeFileSync(run, JSON.stringify({ command: 'search', settings: job.settings }));
    const replayed = await stepwise(search('replayed.jsonl', '--config', run));
    expect(replayed.error, replayed.stderr).toBeUndefined();
    expect(firstRow(join(dir, 'replayed.jsonl')).job).toEqual(job);

    // The same output with another value is another job: refused, naming the flag.
    const other = await stepwise(search('typed.jsonl', '--probe-depth', '7'));
    expect(other.error?.message).toMatch(/--probe-depth 5 in the file, 7 now/);
    // Refused before any work (another strategy's file): the harness starts no run.
    const db = openStore(join(dir, 'home', 'store.sqlite'));
    const runs = listRuns(db).length;
    const strategy = await stepwise([
      ...search('typed.jsonl', '--probe-depth', '5'),
      '--strategy',
      'majority',
    ]);
    expect(strategy.error?.message).toMatch(/holds results of strategy "beam", not "majority"/);
    expect(listRuns(db)).toHaveLength(runs);
  }, 120_000);

  it('6. the docs table has its row, under its strategy', () => {
    const found = methodSettings().find((m) => m.command === 'search');
    if (!found) throw new Error('search is not among the schema-declared methods');
    expect(settingsDocsBlock('search', found.schema)).toContain(
      '| `--probe-depth N` | 3 | an integer between 2 and 9 | beam: how deep the test probe goes |',
    );
  });
});
