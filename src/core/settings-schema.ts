import { z } from 'zod';
import { UsageError } from './errors.js';

/**
 * A method's settings, declared once: one zod object whose fields carry their type, bounds,
 * default and help (as TRL's `field(default=…, metadata={"help": …})`). Everything else is derived
 * from it — the CLI's flags, help, choices and validation (src/cli/settings-options.ts), the
 * library's defaults and checks, `--config` replay, the settings hash and the docs' option tables.
 * A field's name is its flag's (`bestOf` is `--best-of`).
 */
export interface SettingMeta {
  /** What the setting is, in one phrase: the flag's help and the docs' meaning. */
  help: string;
  /** The placeholder of the flag's value: `M` gives `--rollouts <M>` (default: the field's kind). */
  arg?: string;
  /** The default as said in help and docs when it is not one value (the papers', the input's). */
  defaultText?: string;
  /** Changes how fast a job runs or what its cache keeps, never a row: left out of the settings hash. */
  runOnly?: boolean;
  /** How the flag's text becomes a value, where the type alone does not say (a list with aliases). */
  parse?: (text: string) => unknown;
  /** What a valid value is, where the type alone does not say it well. */
  requirement?: string;
  /** The help of `--no-<flag>`: the setting can be switched off (its value false). */
  negate?: string;
}

const SETTINGS = z.registry<SettingMeta>();

/** A field of a settings schema: `setting(z.number().int().min(1).default(4), {help: '…'})`. */
export function setting<T extends z.ZodType>(type: T, meta: SettingMeta): T {
  SETTINGS.add(type, meta);
  return type;
}

// biome-ignore lint/suspicious/noExplicitAny: any zod object of settings
export type SettingsSchema = z.ZodObject<any>;

/** `maxTokens` → `--max-tokens`. */
export function flagOf(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** What one field is, read off its zod type. */
export interface SettingField {
  key: string;
  flag: string;
  meta: SettingMeta;
  /** The field as declared (with its default), what a value is checked against. */
  declared: z.ZodType;
  /** The type inside `.default()` / `.optional()`. */
  type: z.ZodType;
  /** The schema's default (undefined: none). */
  default: unknown;
  /** Neither a default nor optional: the value must be given (the CLI marks the flag required). */
  required: boolean;
  /** Choices, when the value (or one branch of it) is one of a few words. */
  choices?: readonly string[];
  /** `number` (with `int`, `min`, `max`), `boolean`, `choice`, `list` or `other`. */
  kind: 'number' | 'boolean' | 'choice' | 'list' | 'other';
  /** The value may also be a bare `true`/`false` (a flag with an optional value, or `--no-x`). */
  orBoolean: boolean;
  int?: boolean;
  min?: number;
  max?: number;
}

const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function numberBounds(t: z.ZodNumber): Pick<SettingField, 'int' | 'min' | 'max'> {
  const min = t.minValue ?? undefined;
  const max = t.maxValue ?? undefined;
  return {
    int: t.isInt === true,
    min: min === null || min === undefined || min <= -UNBOUNDED ? undefined : min,
    max: max === null || max === undefined || max >= UNBOUNDED ? undefined : max,
  };
}

/** The fields of a settings schema, in declaration order. */
export function settingFields(schema: SettingsSchema): SettingField[] {
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, declared]) => {
    const meta = SETTINGS.get(declared);
    if (!meta) throw new Error(`setting ${key}: declared without help (use setting(type, {help}))`);
    let type: z.ZodType = declared;
    let dflt: unknown;
    let required = true;
    for (;;) {
      if (type instanceof z.ZodDefault) {
        dflt = type.def.defaultValue;
        required = false;
        type = type.unwrap() as z.ZodType;
      } else if (type instanceof z.ZodOptional) {
        required = false;
        type = type.unwrap() as z.ZodType;
      } else break;
    }
    const field: SettingField = {
      key,
      flag: flagOf(key),
      meta,
      declared,
      type,
      default: dflt,
      required,
      kind: 'other',
      orBoolean: false,
    };
    const branches = type instanceof z.ZodUnion ? (type.options as z.ZodType[]) : [type];
    for (const b of branches) {
      if (b instanceof z.ZodNumber) Object.assign(field, { kind: 'number' }, numberBounds(b));
      else if (b instanceof z.ZodEnum)
        Object.assign(field, { kind: 'choice', choices: b.options as string[] });
      else if (b instanceof z.ZodArray && b.element instanceof z.ZodEnum)
        Object.assign(field, { kind: 'list', choices: b.element.options as string[] });
      else if (b instanceof z.ZodBoolean || (b instanceof z.ZodLiteral && b.values.has(false))) {
        if (branches.length === 1) field.kind = 'boolean';
        else field.orBoolean = true;
      }
    }
    return field;
  });
}

/** `a`, `a or b`, `a, b or c`. */
function either(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** What a valid value of the field is: `a positive integer`, `a number between 0 and 1`, `linear or binary`. */
export function requirementOf(f: SettingField): string {
  if (f.meta.requirement) return f.meta.requirement;
  switch (f.kind) {
    case 'number':
      if (f.int) {
        if (f.min === 1 && f.max === undefined) return 'a positive integer';
        if (f.min !== undefined && f.max !== undefined) return `an integer between ${f.min} and ${f.max}`;
        if (f.min !== undefined) return `an integer ≥ ${f.min}`;
        return 'an integer';
      }
      if (f.min !== undefined && f.max !== undefined) return `a number between ${f.min} and ${f.max}`;
      if (f.min !== undefined) return `a number ≥ ${f.min}`;
      if (f.max !== undefined) return `a number ≤ ${f.max}`;
      return 'a number';
    case 'choice':
      return either(f.choices ?? []);
    case 'list':
      return `a comma-separated list of ${either(f.choices ?? [])}`;
    case 'boolean':
      return 'true or false';
    default:
      throw new Error(`setting ${f.key}: say what a valid value is (meta.requirement)`);
  }
}

/** The default as help and docs say it (undefined: none to say). */
export function defaultTextOf(f: SettingField): string | undefined {
  if (f.meta.defaultText !== undefined) return f.meta.defaultText;
  if (f.default === undefined || f.default === false) return undefined;
  return Array.isArray(f.default) ? f.default.join(',') : String(f.default);
}

/** The schema's defaults (fields without one are left out). */
export function settingsDefaults(schema: SettingsSchema): Record<string, unknown> {
  return Object.fromEntries(
    settingFields(schema)
      .filter((f) => f.default !== undefined)
      .map((f) => [f.key, structuredClone(f.default)]),
  );
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
}

/**
 * Check every defined value of `values` against its field; throws a UsageError
 * `<name> must be <requirement> (got <value>)`, the name as `nameOf` says (the CLI: its flag).
 * A key the schema does not have is refused: a typo must not fall back to a default.
 */
export function checkSettings(
  schema: SettingsSchema,
  values: Record<string, unknown>,
  nameOf: (key: string) => string,
  what = 'settings',
): void {
  const fields = new Map(settingFields(schema).map((f) => [f.key, f]));
  for (const key of Object.keys(values))
    if (!fields.has(key))
      throw new UsageError(`${what}: unknown field "${key}" (known: ${[...fields.keys()].join(', ')})`);
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const f = fields.get(key) as SettingField;
    if (!f.declared.safeParse(value).success) {
      throw new UsageError(`${nameOf(key)} must be ${requirementOf(f)} (got ${show(value)})`);
    }
  }
}

/**
 * A method's settings resolved: the schema's defaults under the given values (undefined ones left
 * out), each checked ({@link checkSettings}); a required field left unset is a UsageError
 * `<name> is required`. What several fields must be together is the method's own check, after.
 */
export function resolveSettings<S extends SettingsSchema>(
  schema: S,
  values: Record<string, unknown>,
  nameOf: (key: string) => string,
  what = 'settings',
): z.output<S> {
  const defined = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
  const resolved = { ...settingsDefaults(schema), ...defined };
  checkSettings(schema, resolved, nameOf, what);
  for (const f of settingFields(schema))
    if (f.required && resolved[f.key] === undefined)
      throw new UsageError(`${nameOf(f.key)} is required (${requirementOf(f)})`);
  return resolved as z.output<S>;
}

/** The fields that change what a row holds (every one not marked `runOnly`): the hashed ones. */
export function rowSettingKeys(schema: SettingsSchema): string[] {
  return settingFields(schema)
    .filter((f) => !f.meta.runOnly)
    .map((f) => f.key);
}

/**
 * `seed`, the one declaration of a run's seed (flag `--seed <n>`), shared by every method schema
 * and every command that takes one; `help` says what it seeds there.
 */
export function seedSetting(
  help: string,
  bounds: { min?: number; default: number },
): z.ZodDefault<z.ZodNumber>;
export function seedSetting(
  help: string,
  bounds?: { min?: number; default?: number },
): z.ZodType<number | undefined>;
export function seedSetting(help: string, bounds: { min?: number; default?: number } = {}): z.ZodType {
  const int = bounds.min === undefined ? z.number().int() : z.number().int().min(bounds.min);
  return setting(bounds.default === undefined ? int.optional() : int.default(bounds.default), {
    help,
    arg: 'n',
  });
}
