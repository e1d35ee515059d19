import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { SRC, sourceCode, where } from '../support/source-code.js';

const code = sourceCode();

/** An option declared with this flag: `new Option('--json'`, `.option('--json'`, `.requiredOption(…`. */
const declaration = (flag: string): RegExp =>
  new RegExp(`(new Option|\\.option|\\.requiredOption)\\(\\s*['"\`]${flag}[\\s'"\`<\\[]`, 'g');

describe('--json, --seed, --quiet and --base-url are each declared once in src/', () => {
  it.each(['--json', '--quiet', '--base-url'])('%s: one declaration, in src/cli/option-groups.ts', (flag) => {
    expect(where(declaration(flag))).toEqual(['cli/option-groups.ts']);
  });

  it('--seed: one declaration (seedSetting), which schemas and the option group both use', () => {
    expect(where(declaration('--seed'))).toEqual([]);
    expect(where(/function seedSetting\(/g)).toEqual([
      'core/settings-schema.ts',
      'core/settings-schema.ts',
      'core/settings-schema.ts',
    ]);
    // No schema declares its own seed field.
    expect(where(/\bseed: setting\(/g)).toEqual([]);
  });

  it('the commands that have these flags got them from the one declaration (same shape everywhere)', () => {
    const seen = new Map<string, Set<string>>();
    const walk = (cmd: ReturnType<typeof buildProgram>): void => {
      for (const o of cmd.options)
        if (o.long && ['--json', '--seed', '--quiet', '--base-url'].includes(o.long))
          seen.set(o.long, (seen.get(o.long) ?? new Set()).add(o.flags));
      for (const sub of cmd.commands) walk(sub);
    };
    walk(buildProgram());
    expect(Object.fromEntries([...seen].map(([k, v]) => [k, [...v]]))).toEqual({
      '--json': ['--json'],
      '--seed': ['--seed <n>'],
      '--quiet': ['--quiet'],
      '--base-url': ['--base-url <url>'],
    });
  });
});

describe('a command is a declaration plus a call', () => {
  it("label's command file is under 150 lines: its flags come from the schema and the option groups, its run from the job harness", () => {
    const label = code.find((c) => c.file === 'cli/commands/label.ts');
    expect(readFileSync(join(SRC, 'cli/commands/label.ts'), 'utf8').split('\n').length).toBeLessThan(150);
    expect(label?.text).toContain('addSettingsOptions(cmd, LABEL_SETTINGS)');
    expect(code.find((c) => c.file === 'cli/label-run.ts')?.text).toContain('runJobCommand(');
  });
});

describe('the job harness alone owns run records', () => {
  it('startRun( and finishRun( are called only in src/cli/job-harness.ts and src/store/ (demo and recordedSearch go through the harness)', () => {
    const callers = where(/\b(startRun|finishRun)\(/g).filter((file) => !file.startsWith('store/'));
    expect([...new Set(callers)]).toEqual(['cli/job-harness.ts']);
  });
});
