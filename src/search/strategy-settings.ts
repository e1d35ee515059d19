import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { resolveSettings, type SettingsSchema, setting, settingFields } from '../core/settings-schema.js';
import {
  DEFAULT_STEP_SEPARATOR,
  type SettingsOutput,
  SHARED_SEARCH_SETTINGS,
  type SharedSearchConfig,
} from './settings.js';

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** The resolved config of a set of strategies: the shared settings and every strategy's own. */
export type SettingsOf<T extends Record<string, { settings: z.ZodObject }>> = SharedSearchConfig &
  UnionToIntersection<EachOutput<T[keyof T]['settings']>>;

/** Each schema's output on its own (distributed over the union, then intersected). */
type EachOutput<S> = S extends z.ZodObject ? SettingsOutput<S> : never;

/**
 * The shared search settings, then every strategy's own, each strategy's help starting with its
 * name (`beam: m: keep the top N/m beams…`): one flag per field on every search command. A field
 * two schemas declare is refused (a strategy reads a setting another declares from the shared
 * schema, ./settings.ts, where it is declared once).
 */
export function joinStrategySettings(strategies: Record<string, { settings: z.ZodObject }>): SettingsSchema {
  const shape: Record<string, z.ZodType> = { ...SHARED_SEARCH_SETTINGS.shape };
  const owner = new Map<string, string>(Object.keys(shape).map((k) => [k, 'the shared settings']));
  for (const [name, { settings }] of Object.entries(strategies)) {
    for (const f of settingFields(settings)) {
      const other = owner.get(f.key);
      if (other !== undefined || f.key === 'stepSeparator')
        throw new Error(
          `search settings: strategy ${name} declares "${f.key}", which ${other ?? 'the library'} declares too; declare a setting of several strategies once, in src/search/settings.ts`,
        );
      owner.set(f.key, `strategy ${name}`);
      shape[f.key] = setting(f.declared.clone(), { ...f.meta, help: `${name}: ${f.meta.help}` });
    }
  }
  return z.object(shape);
}

/**
 * Defaults of `schema` (and the step separator) filled in, every field checked alone and the
 * verdict thresholds together; a UsageError names the field as `nameOf` says (default
 * `search config: <field>`). An unknown field is refused: a typo must not fall back to a default.
 */
export function resolveStrategyConfig(
  schema: SettingsSchema,
  partial: Record<string, unknown> = {},
  nameOf?: (key: string) => string,
): SharedSearchConfig & Record<string, unknown> {
  const name = nameOf ?? ((k: string) => k);
  const where = nameOf ? '' : 'search config: ';
  const { stepSeparator = DEFAULT_STEP_SEPARATOR, ...given } = partial;
  const settings = resolveSettings(schema, given, (k) => `${where}${name(k)}`, 'search config');
  if (typeof stepSeparator !== 'string' || stepSeparator === '')
    throw new UsageError('search config: stepSeparator must be a non-empty string');
  const c = { ...settings, stepSeparator } as SharedSearchConfig & Record<string, unknown>;
  if ((c.positiveAt === undefined) !== (c.negativeBelow === undefined))
    throw new UsageError(`${where}set both ${name('positiveAt')} and ${name('negativeBelow')}, or neither`);
  if (c.positiveAt !== undefined && c.negativeBelow !== undefined && c.negativeBelow > c.positiveAt)
    throw new UsageError(`${where}${name('negativeBelow')} must not exceed ${name('positiveAt')}`);
  return c;
}
