import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  defaultTextOf,
  requirementOf,
  type SettingField,
  type SettingsSchema,
  settingFields,
} from '../core/settings-schema.js';

/**
 * The CLI side of a method's settings schema (src/core/settings-schema.ts): one flag per field,
 * named as the field (`bestOf` is `--best-of`), its help with the default generated from the
 * schema, its choices and bounds, and a parser whose message names the flag. No commander default
 * is set: an unset flag is undefined and the method's resolver fills the schema's default, so a
 * `--config` replay can tell a typed flag from a default and the library and CLI share one value.
 */
export function addSettingsOptions(cmd: Command, schema: SettingsSchema): Command {
  for (const f of settingFields(schema)) {
    // A field with no default is a required flag (`--config` may give it: see config-file.ts).
    const option = settingOption(f);
    cmd.addOption(f.required ? option.makeOptionMandatory() : option);
    if (f.meta.negate) cmd.addOption(new Option(`--no-${f.flag.slice(2)}`, f.meta.negate));
  }
  return cmd;
}

/** The values the flags set, keyed by field (unset flags undefined). */
export function settingsFromFlags(
  schema: SettingsSchema,
  flags: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(settingFields(schema).map((f) => [f.key, flags[f.key]]));
}

/** `--rollouts <M>`, `--early-stop [batch]`, `--keep-rollouts`. */
function flagsOf(f: SettingField): string {
  if (f.kind === 'boolean') return f.flag;
  const arg = f.meta.arg ?? (f.kind === 'number' ? 'n' : f.kind === 'list' ? 'list' : 'value');
  return f.orBoolean && f.kind === 'number' ? `${f.flag} [${arg}]` : `${f.flag} <${arg}>`;
}

/** The help of a setting's flag: what it is, then its default. */
export function settingHelp(f: SettingField): string {
  const dflt = defaultTextOf(f);
  return `${f.meta.help}${dflt === undefined ? '' : ` (default: ${dflt})`}`;
}

/** The flag of one field (`withDefault`: its help says the schema's default). */
export function settingOption(f: SettingField, withDefault = true): Option {
  const o = new Option(flagsOf(f), withDefault ? settingHelp(f) : f.meta.help);
  if (f.kind === 'boolean') return o;
  if (f.kind === 'choice' && !f.meta.parse) return o.choices([...(f.choices ?? [])]);
  return o.argParser((text: string) => parseSetting(f, text));
}

/** A flag's text as the field's value, or a commander error naming the flag. */
export function parseSetting(f: SettingField, text: string): unknown {
  let value: unknown;
  if (f.meta.parse) {
    try {
      value = f.meta.parse(text);
    } catch (e) {
      throw new InvalidArgumentError(`${f.flag}: ${(e as Error).message}`);
    }
  } else if (f.kind === 'number') value = text.trim() === '' ? Number.NaN : Number(text);
  else if (f.kind === 'list') value = text.split(',').map((s) => s.trim());
  else value = text;
  if (!f.declared.safeParse(value).success)
    throw new InvalidArgumentError(`${f.flag} must be ${requirementOf(f)} (got "${text}")`);
  return value;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');
}

/** The docs' option table of a settings schema (docs/cli.md, kept equal by a test). */
export function settingsTable(schema: SettingsSchema): string {
  const rows = settingFields(schema).map((f) => {
    const typed = flagsOf(f).replace(/<([^>]+)>/, (_, arg: string) => arg.toUpperCase());
    const flag = `\`${typed}\`${f.meta.negate ? `, \`--no-${f.flag.slice(2)}\`` : ''}`;
    const dflt = defaultTextOf(f) ?? (f.required ? 'required' : f.kind === 'boolean' ? 'off' : '—');
    const help = `${f.meta.help}${f.meta.runOnly ? '; not a recorded setting (does not change a row)' : ''}`;
    return `| ${flag} | ${cell(dflt)} | ${cell(requirementOf(f))} | ${cell(help)} |`;
  });
  return ['| flag | default | value | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
