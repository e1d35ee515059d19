import type { z } from 'zod';
import { resolveSettings } from '../core/settings-schema.js';
import { type JobSettings, methodJobSettings } from '../jobs/settings.js';
import { LABEL_CODE_SETTINGS } from './settings.js';

export { LABEL_CODE_SETTINGS };

/** The settings of a label-code job, resolved: the output of {@link LABEL_CODE_SETTINGS}. */
export type LabelCodeConfig = z.output<typeof LABEL_CODE_SETTINGS>;

/** Defaults filled in and every field checked; a UsageError names the field as `nameOf` says. */
export function resolveLabelCodeConfig(
  partial: Partial<LabelCodeConfig> = {},
  nameOf: (field: string) => string = (f) => `label-code config: ${f}`,
): LabelCodeConfig {
  return resolveSettings(LABEL_CODE_SETTINGS, partial, nameOf, 'label-code config');
}

/**
 * The recorded settings of a label-code job (field `job` of every row and of the run record):
 * every row setting of the config and what else the rows depend on (`context`: the data set, its
 * file and split). `segmentation` is recorded as `segment`, the name rows have always carried, so
 * the settings hash of an existing file is unchanged.
 */
export function labelCodeJobSettings(c: LabelCodeConfig, context: Record<string, unknown> = {}): JobSettings {
  return methodJobSettings('label-code', LABEL_CODE_SETTINGS, c, context, ({ segmentation, ...rest }) => ({
    ...rest,
    segment: segmentation,
  }));
}
