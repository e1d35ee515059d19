import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';

/** Every command and subcommand of the program, with its full name (`bench search`). */
function commandsOf(cmd: Command, prefix = ''): Array<{ name: string; cmd: Command }> {
  return cmd.commands.flatMap((c) => {
    const name = `${prefix}${c.name()}`;
    return [{ name, cmd: c }, ...commandsOf(c, `${name} `)];
  });
}

const commands = commandsOf(buildProgram());

describe('every required option says so in --help (README: required options are marked)', () => {
  it('the program has the commands this checks', () => {
    expect(commands.map((c) => c.name)).toEqual(
      expect.arrayContaining(['label', 'sample', 'search', 'eval processbench']),
    );
    expect(commands.some((c) => c.cmd.options.some((o) => o.mandatory))).toBe(true);
  });

  it.each(commands)('$name', ({ cmd }) => {
    // The help as --help prints it: each mandatory option's entry, up to the next option's, says "(required)".
    const help = cmd.helpInformation();
    for (const option of cmd.options.filter((o) => o.mandatory)) {
      const at = help.indexOf(`${option.flags}  `);
      expect(at, `${option.flags} in the help`).toBeGreaterThanOrEqual(0);
      const entry = help.slice(at).split(/\n\s+--?[a-zA-Z]/)[0];
      expect(entry, option.flags).toContain('(required)');
    }
  });

  it('an option required only in one mode says when: segment --segmentation llm needs --model, --input, --out', () => {
    const segment = commands.find((c) => c.name === 'segment');
    if (!segment) throw new Error('no segment command');
    for (const flag of ['--model', '--input', '--out']) {
      const option = segment.cmd.options.find((o) => o.long === flag);
      expect(option?.description, flag).toContain('(required with --segmentation llm)');
    }
  });
});
