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
 * Issue 29, acceptance 1, for `eval processbench` and the judge kinds: a field added to the
 * ProcessBench settings schema (src/evaluate/settings.ts) and one added to a judge kind's schema
 * (the critic's, src/judge/critic.ts) appear everywhere with no other edit — the eval field in
 * the flag, help with its default, validation naming the flag, `--config` replay, the settings
 * hash and the docs/cli.md table; the judge setting in the spec's query (checked, naming the
 * key), the `--judge` help with its default, the factory's settings, the run's hash and replay,
 * and the docs/judges.md table.
 */
const seen = vi.hoisted(() => ({ probeWidth: [] as unknown[] }));

vi.mock('../../src/evaluate/settings.js', async (importOriginal) =>
  (await import('../support/settings-probe.js')).withProbe(
    await importOriginal<typeof import('../../src/evaluate/settings.js')>(),
    'PROCESSBENCH_SETTINGS',
  ),
);

vi.mock('../../src/judge/critic.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/judge/critic.js')>();
  const { z } = await import('zod');
  const { setting } = await import('../../src/core/settings-schema.js');
  const kind = original.CRITIC_KIND;
  return {
    ...original,
    CRITIC_KIND: {
      ...kind,
      settings: kind.settings.extend({
        probeWidth: setting(z.number().int().min(1).max(6).default(2), {
          help: 'how wide the test probe looks',
        }),
      }),
      create: (model: never, settings: { probeWidth: number }, context: never) => {
        seen.probeWidth.push(settings.probeWidth);
        return kind.create(model, settings as never, context);
      },
    },
  };
});

const { methodSettings, settingsDocsBlock } = await import('../../src/cli/settings-docs.js');
const { judgeKindsTable, judgeSpecHelp } = await import('../../src/cli/judge-docs.js');
const { parseJudgeSpec } = await import('../../src/judge/spec.js');

describe('a setting added to the eval schema, and one added to a judge kind, are everywhere', () => {
  const home = useTempHome('stepwise-schema-eval-');
  let dir: string;
  beforeAll(() => {
    dir = home();
  });
  const pb = (out: string, ...more: string[]): string[] => [
    ...['eval', 'processbench', '--path', sharedData('processbench/gsm8k.json'), '--limit', '2'],
    ...['--sim-guess', '--out', join(dir, out), ...more],
  ];
  const predictions = (out: string) => join(dir, out.replace(/\.json$/, '.predictions.jsonl'));

  it('eval 1-2: a flag of its name, and help with its default', async () => {
    const help = await stepwise(['eval', 'processbench', '--help']);
    expect(help.stdout).toMatch(PROBE_HELP);
  });

  it('eval 3: validation names the flag and the bounds', async () => {
    const bad = await stepwise(pb('bad.json', '--judge', 'sim:critic', '--probe-depth', '12'));
    expect(bad.error).toBeDefined();
    expect(bad.stderr).toContain(PROBE_REFUSED);
  });

  it('eval 4-5: --config replays it, and the settings hash covers it', async () => {
    const plain = await stepwise(pb('default.json', '--judge', 'sim:critic'));
    expect(plain.error).toBeUndefined();
    const byDefault = firstRow(predictions('default.json')).job;
    expect(byDefault.settings.probeDepth).toBe(3);
    const run = join(dir, 'run.json');
    const settings = { ...byDefault.settings, probeDepth: 5 };
    writeFileSync(run, JSON.stringify({ command: 'eval processbench', settings }));
    const replayed = await stepwise([
      'eval',
      'processbench',
      '--config',
      run,
      ...pb('replayed.json').slice(2),
    ]);
    expect(replayed.error).toBeUndefined();
    const again = firstRow(predictions('replayed.json')).job;
    expect(again.settings.probeDepth).toBe(5);
    expect(again.hash).not.toBe(byDefault.hash);
    const typed = await stepwise(pb('typed.json', '--judge', 'sim:critic', '--probe-depth', '5'));
    expect(typed.error).toBeUndefined();
    expect(firstRow(predictions('typed.json')).job.hash).toBe(again.hash);
  }, 120_000);

  it('eval 6: the docs/cli.md table has its row', () => {
    const found = methodSettings().find((m) => m.command === 'eval processbench');
    if (!found) throw new Error('eval processbench is not among the schema-declared methods');
    expect(settingsDocsBlock('eval processbench', found.schema)).toContain(PROBE_DOCS_ROW);
  });

  it('judge kind: the query key is parsed and checked, naming the key', () => {
    expect(parseJudgeSpec('critic:sim?probe_width=4&critic_accuracy=0.7')).toEqual({
      kind: 'critic',
      model: 'sim?critic_accuracy=0.7',
      settings: { probeWidth: 4 },
    });
    expect(() => parseJudgeSpec('critic:sim?probe_width=9')).toThrow(
      'judge option probe_width=9 must be an integer between 1 and 6 (got 9)',
    );
  });

  it('judge kind: the --judge help and the docs/judges.md table list it with its default', async () => {
    expect(judgeSpecHelp()).toContain('probe_width=V (default 2)');
    const help = await stepwise(['eval', 'processbench', '--help']);
    expect(help.stdout).toContain('probe_width=V (default 2)');
    expect(judgeKindsTable()).toContain(
      '| `probe_width=V` | 2 | an integer between 1 and 6 | how wide the test probe looks |',
    );
  });

  it('judge kind: the factory gets it (default or given), the run hash and --config replay carry it', async () => {
    seen.probeWidth.length = 0;
    const given = await stepwise(pb('judge-given.json', '--judge', 'sim:critic?probe_width=4'));
    expect(given.error).toBeUndefined();
    expect(seen.probeWidth).toEqual([4]);
    const recorded = firstRow(predictions('judge-given.json')).job;
    expect(recorded.settings.judge).toBe('sim:critic?probe_width=4');
    expect(recorded.hash).not.toBe(firstRow(predictions('default.json')).job.hash);
    const run = join(dir, 'judge-run.json');
    writeFileSync(run, JSON.stringify({ command: 'eval processbench', settings: recorded.settings }));
    const replayed = await stepwise([
      'eval',
      'processbench',
      '--config',
      run,
      ...pb('judge-replayed.json').slice(2),
    ]);
    expect(replayed.error).toBeUndefined();
    expect(seen.probeWidth).toEqual([4, 4]);
    expect(firstRow(predictions('judge-replayed.json')).job.hash).toBe(recorded.hash);
    // The default reaches the factory when the spec does not give it.
    await stepwise(pb('judge-default.json', '--judge', 'sim:critic'));
    expect(seen.probeWidth.at(-1)).toBe(2);
  }, 120_000);
});
