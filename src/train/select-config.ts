import type { z } from 'zod';
import { resolveSettings } from '../core/settings-schema.js';
import { type JobSettings, methodJobSettings } from '../jobs/settings.js';
import { SELECT_SETTINGS } from './select-settings.js';

export { SELECT_SETTINGS };

/** The settings of a select job, resolved: the output of {@link SELECT_SETTINGS}. */
export type SelectConfig = z.output<typeof SELECT_SETTINGS>;

/** Defaults filled in and every field checked; a UsageError names the field as `nameOf` says. */
export function resolveSelectConfig(
  partial: Partial<SelectConfig> = {},
  nameOf: (field: string) => string = (f) => `select config: ${f}`,
): SelectConfig {
  return resolveSettings(SELECT_SETTINGS, partial, nameOf, 'select config');
}

/**
 * The recorded settings of a select job (field `job` of every row and of the run record): every
 * row setting of the config and what else the rows depend on (`context`: the judge spec).
 */
export function selectJobSettings(c: SelectConfig, context: Record<string, unknown> = {}): JobSettings {
  return methodJobSettings('select', SELECT_SETTINGS, c, context);
}
