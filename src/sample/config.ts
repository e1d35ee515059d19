import type { z } from 'zod';
import type { Segmentation, SegmentBy } from '../core/segment.js';
import { resolveSettings } from '../core/settings-schema.js';
import { type JobSettings, methodJobSettings } from '../jobs/settings.js';
import { SAMPLE_SETTINGS } from './settings.js';

export { SAMPLE_SETTINGS };

/** The settings of a sample job, resolved: the output of {@link SAMPLE_SETTINGS}. */
export type SampleConfig = z.output<typeof SAMPLE_SETTINGS>;

/**
 * Defaults filled in and every field checked against {@link SAMPLE_SETTINGS}; throws a UsageError
 * naming the field as `nameOf` says (the CLI: its flag). `n` has no default: it must be given.
 */
export function resolveSampleConfig(
  partial: Partial<SampleConfig>,
  nameOf: (field: string) => string = (f) => `sample config: ${f}`,
): SampleConfig {
  return resolveSettings(SAMPLE_SETTINGS, partial, nameOf, 'sample config');
}

/**
 * How a `--segmentation` mode is sampled: under tags the policy segments (its own `<chunk>` tags);
 * otherwise it writes plain text, split by paragraphs, steps or lines (`segmentBy`).
 */
export function sampleSegmentation(mode: SampleConfig['segmentation']): {
  segmentation: Segmentation;
  segmentBy: Exclude<SegmentBy, 'tags'>;
} {
  return mode === 'tags'
    ? { segmentation: 'tags', segmentBy: 'paragraph' }
    : { segmentation: 'paragraph', segmentBy: mode };
}

/**
 * The recorded settings of a sample job (field `job` of every row and of the run record): every
 * row setting of the config (all fields but the run-only ones) and what else the rows depend on
 * (`context`: the data set, the policy spec, its chat template's id). Two fields keep the names
 * rows have always recorded, so the settings hash of an existing file is unchanged: `promptForm`
 * is recorded as `form`, and `segmentation` as the policy's segmentation (paragraph or tags) and
 * how its paragraphs are split (`segmentBy`).
 */
export function sampleJobSettings(c: SampleConfig, context: Record<string, unknown> = {}): JobSettings {
  return methodJobSettings(
    'sample',
    SAMPLE_SETTINGS,
    c,
    context,
    ({ promptForm, segmentation, ...rest }) => ({
      ...rest,
      form: promptForm,
      ...sampleSegmentation(segmentation as SampleConfig['segmentation']),
    }),
  );
}
