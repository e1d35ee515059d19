import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { SETTINGS, settingOf, TIMEOUT_FLAG } from '../../src/cli/vocabulary.js';
import { startCli } from '../support/cli.js';

interface Row {
  command: string;
  option: Option;
}

/** Every option of every command that runs (leaf commands), with the command's path. */
function optionTable(): Row[] {
  const rows: Row[] = [];
  const walk = (cmd: Command, path: string[]): void => {
    if (cmd.commands.length === 0)
      for (const option of cmd.options) rows.push({ command: path.join(' '), option });
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(buildProgram(), []);
  return rows;
}

/** The default an option declares: commander's, else the "(default X)" its help states. */
function declaredDefault(o: Option): string | undefined {
  if (o.defaultValue !== undefined) return String(o.defaultValue);
  const m = /\(default:? ([^),;:]+)/.exec(o.description);
  return m ? m[1].trim() : undefined;
}

const rows = optionTable();
const byCommand = new Map<string, Set<string>>();
for (const r of rows) {
  if (!r.option.long) continue;
  byCommand.set(r.command, (byCommand.get(r.command) ?? new Set()).add(r.option.long));
}

describe('one CLI vocabulary: a registry of settings checked against every command', () => {
  it('walks every command', () => {
    for (const c of ['sample', 'label', 'search', 'bench search', 'eval chunks', 'segment', 'data pull'])
      expect(byCommand.has(c), c).toBe(true);
    expect(rows.length).toBeGreaterThan(250);
  });

  it('no visible option is a second name of a registered setting; every hidden one is an alias next to its setting', () => {
    const problems: string[] = [];
    for (const { command, option } of rows) {
      const flag = option.long;
      if (!flag) continue;
      const setting = settingOf(flag);
      if (option.hidden) {
        if (!setting || setting.flag === flag)
          problems.push(`${command} ${flag}: hidden, but not a registered old name (src/cli/vocabulary.ts)`);
        else if (!byCommand.get(command)?.has(setting.flag))
          problems.push(`${command} ${flag}: old name of ${setting.flag}, which ${command} lacks`);
      } else if (setting && setting.flag !== flag) {
        problems.push(`${command} ${flag}: a second name of ${setting.flag} — use ${setting.flag}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('a registered setting has one default everywhere, except where the registry says why not', () => {
    const problems: string[] = [];
    for (const { command, option } of rows) {
      if (!option.long || option.hidden) continue;
      const setting = SETTINGS.find((s) => s.flag === option.long);
      if (!setting || typeof setting.default === 'boolean') continue;
      const special = setting.defaults?.[command];
      const expected = special ? special.value : setting.default;
      const actual = declaredDefault(option);
      // No fixed value: the registry says what it depends on instead.
      if (expected === undefined) continue;
      if (String(expected) !== String(actual))
        problems.push(
          `${command} ${option.long}: default ${actual ?? '(none)'}, the registry says ${expected ?? '(none)'}`,
        );
    }
    expect(problems).toEqual([]);
  });

  it(`every time limit is ${TIMEOUT_FLAG} (milliseconds); every delay ends in -ms`, () => {
    const problems = rows
      .filter(({ option }) => !option.hidden && /timeout|latency|delay/.test(option.long ?? ''))
      .filter(({ option }) => !(option.long === TIMEOUT_FLAG || option.long?.endsWith('-ms')))
      .map(({ command, option }) => `${command} ${option.long}`);
    expect(problems).toEqual([]);
  });

  it('--fields wherever --dataset names a data set; --api-key and --store wherever a model server is reached', () => {
    const problems: string[] = [];
    for (const [command, flags] of byCommand) {
      // label-code's data sets are the code sets (mbpp, humaneval), read by their own loaders.
      if (flags.has('--dataset') && command !== 'label-code' && !flags.has('--fields'))
        problems.push(`${command}: --dataset without --fields`);
      if (flags.has('--base-url') && !flags.has('--api-key'))
        problems.push(`${command}: --base-url without --api-key`);
      // serve rewards keeps no run record; its judge uses the default store.
      if (flags.has('--base-url') && command !== 'serve rewards' && !flags.has('--store'))
        problems.push(`${command}: reaches a model without --store`);
    }
    expect(problems).toEqual([]);
  });

  it('the registry names each flag once', () => {
    const names = SETTINGS.flatMap((s) => [s.flag, ...(s.aliases ?? [])]);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('old names still work (hidden aliases)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stepwise-vocab-reg-'));
  const home = join(dir, 'home');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('segment --by is --segmentation; giving both with different values is refused', async () => {
    const file = join(dir, 't.txt');
    writeFileSync(file, 'Step 1: a\nStep 2: b\n');
    const now = await startCli(['segment', '--segmentation', 'steps', file, '--json'], home).done;
    const old = await startCli(['segment', '--by', 'steps', file, '--json'], home).done;
    expect(now.code).toBe(0);
    expect(old.code).toBe(0);
    expect(JSON.parse(old.stdout)).toEqual(JSON.parse(now.stdout));
    expect(JSON.parse(now.stdout).chunks).toHaveLength(2);
    const both = await startCli(['segment', '--by', 'steps', '--segmentation', 'lines', file], home).done;
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--by is the old name of --segmentation/);
    const help = await startCli(['segment', '--help'], home).done;
    expect(help.stdout).toMatch(/--segmentation <mode>/);
    expect(help.stdout).not.toMatch(/--by\b/);
  });

  it('sample --form and --segment-by still work and record the same settings as the new names', async () => {
    const common = ['sample', '--dataset', 'sim', '--limit', '2', '--policy', 'sim', '--n', '1', '--json'];
    const now = await startCli(
      [...common, '--prompt-form', 'chat', '--segmentation', 'lines', '--out', join(dir, 'a.jsonl')],
      home,
    ).done;
    const old = await startCli(
      [...common, '--form', 'chat', '--segment-by', 'lines', '--out', join(dir, 'b.jsonl')],
      home,
    ).done;
    expect(now.code, now.stderr).toBe(0);
    expect(old.code, old.stderr).toBe(0);
    expect(JSON.parse(old.stdout).settingsHash).toBe(JSON.parse(now.stdout).settingsHash);
    const tagsAndSteps = await startCli(
      [...common, '--segmentation', 'tags', '--segment-by', 'steps', '--out', join(dir, 'c.jsonl')],
      home,
    ).done;
    expect(tagsAndSteps.code).toBe(2);
    expect(tagsAndSteps.stderr).toMatch(/--segment-by goes with --segmentation paragraph/);
  });

  it('verify --timeout is --timeout-ms', async () => {
    const old = await startCli(['verify', '--timeout', '500', '1/2', '0.5'], home).done;
    expect(old.code).toBe(0);
    expect(old.stdout.trim()).toBe('equal');
    const bad = await startCli(['verify', '--timeout-ms', '0', '1', '1'], home).done;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--timeout-ms must be a positive number of ms/);
  });
});
