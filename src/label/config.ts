import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import { checkSettings, rowSettingKeys, settingFields, settingsDefaults } from '../core/settings-schema.js';
import { type JobSettings, methodJobSettings } from '../jobs/settings.js';
import type { PromptForm } from '../models/policy.js';
import { DEFAULT_EARLY_STOP_BATCH, LABEL_SETTINGS } from './settings.js';
import {
  ANY_CORRECT_SIGNALS,
  defaultRollouts,
  LABEL_SIGNALS,
  type LabelSignal,
  type SignalParams,
} from './signals.js';

export { DEFAULT_EARLY_STOP_BATCH, LABEL_SETTINGS };

/** How the first error is found: every prefix estimated, or OmegaPRM's bisection. */
export type SearchMode = LabelConfig['search'];

export type LabelOutputFormat = LabelConfig['format'];

/** What the model-call cache keeps of each rollout: its text, its verdict only, or nothing (off). */
export type LabelCacheMode = LabelConfig['cache'];

/**
 * Every setting of rollout labeling, in one object (as {@link SearchConfig} is for search): the
 * output of {@link LABEL_SETTINGS} (./settings.ts), where each field's type, bounds, default and
 * help are declared. The library (`labelSolution`, `runLabelJob`), `stepwise label` and the run
 * record all take it through {@link resolveLabelConfig}. Field names are the flags' (`bestOf` is
 * `--best-of`): a recorded setting names the flag that sets it, and `--config run.json` sets
 * flags from them. `rollouts` is always set once resolved (its default follows the signals).
 */
export type LabelConfig = Omit<z.output<typeof LABEL_SETTINGS>, 'rollouts'> & { rollouts: number };

/** The defaults; `rollouts` is filled from the signals, `segmentation` and `promptForm` from the context. */
export const DEFAULT_LABEL_CONFIG = Object.freeze(settingsDefaults(LABEL_SETTINGS)) as Readonly<
  Omit<LabelConfig, 'rollouts'>
>;

/** Every field of {@link LabelConfig}, in the order of its declaration. */
export const LABEL_CONFIG_KEYS = settingFields(LABEL_SETTINGS).map(
  (f) => f.key,
) as readonly (keyof LabelConfig)[];

/**
 * Fields that change how fast or what is kept in the cache, never what a row holds (`runOnly`):
 * left out of the recorded settings, so a run resumes with another concurrency or cache mode.
 */
export const LABEL_RUN_ONLY_KEYS = LABEL_CONFIG_KEYS.filter(
  (k) => !rowSettingKeys(LABEL_SETTINGS).includes(k),
) as readonly (keyof LabelConfig)[];

/** Defaults that depend on where the config is used. */
export interface LabelConfigContext {
  /** The segmentation used when the config sets none (the policy's, or the input's). */
  segmentation?: Segmentation;
  /** The prompt form used when the config sets none (the policy's). */
  promptForm?: PromptForm;
  /** How errors name a field (default `label config: <field>`; the CLI names its flag). */
  nameOf?: (field: keyof LabelConfig) => string;
}

const NEEDS_VALUE: readonly LabelSignal[] = ['rel-ratio', 'rel-effective', 'ms-soft'];

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
}

/**
 * Defaults filled in and every field checked, alone (against {@link LABEL_SETTINGS}) and together
 * (binary search and early stop decide only some signals; kept rollouts need the full cache).
 * Throws a UsageError naming the field; an unknown field is refused too (a typo must not silently
 * fall back to a default).
 */
export function resolveLabelConfig(
  partial: Partial<LabelConfig> = {},
  context: LabelConfigContext = {},
): LabelConfig {
  const name = context.nameOf ?? ((f: keyof LabelConfig) => `label config: ${f}`);
  const fail = (field: keyof LabelConfig, what: string, value: unknown): never => {
    throw new UsageError(`${name(field)} ${what} (got ${show(value)})`);
  };
  for (const key of Object.keys(partial))
    if (!(LABEL_CONFIG_KEYS as readonly string[]).includes(key))
      throw new UsageError(`label config: unknown field "${key}" (known: ${LABEL_CONFIG_KEYS.join(', ')})`);
  const defined = Object.fromEntries(
    Object.entries(partial).filter(([, v]) => v !== undefined),
  ) as Partial<LabelConfig>;
  const signals = defined.signals ?? [...DEFAULT_LABEL_CONFIG.signals];
  if (!Array.isArray(signals) || signals.length === 0)
    fail('signals', 'must list at least one signal', signals);
  for (const s of signals)
    if (!(LABEL_SIGNALS as readonly string[]).includes(s))
      fail('signals', `must be among ${LABEL_SIGNALS.join(', ')}`, s);
  const c = {
    ...structuredClone(DEFAULT_LABEL_CONFIG),
    segmentation: context.segmentation ?? DEFAULT_LABEL_CONFIG.segmentation,
    promptForm: context.promptForm ?? DEFAULT_LABEL_CONFIG.promptForm,
    rollouts: defaultRollouts(signals),
    ...defined,
    signals: [...new Set(signals)],
  } as LabelConfig;
  checkSettings(LABEL_SETTINGS, c, (k) => name(k as keyof LabelConfig), 'label config');

  // Together.
  const valueSignals = c.signals.filter((s) => !ANY_CORRECT_SIGNALS.includes(s));
  if (c.search === 'binary' && valueSignals.length > 0)
    throw new UsageError(
      `${name('search')} binary finds where Q̂ drops to 0, which decides only ${ANY_CORRECT_SIGNALS.join(', ')}; ` +
        `not ${valueSignals.join(', ')} (use linear search)`,
    );
  if (c.earlyStop !== false && c.signals.some((s) => NEEDS_VALUE.includes(s)))
    throw new UsageError(
      `${name('earlyStop')} decides only ${ANY_CORRECT_SIGNALS.join(', ')} (one correct rollout is enough); ` +
        `${c.signals.filter((s) => NEEDS_VALUE.includes(s)).join(', ')} need all M rollouts`,
    );
  if (c.processbenchSignal !== undefined) {
    if (c.format === 'processbench' && !c.signals.includes(c.processbenchSignal))
      throw new UsageError(
        `${name('processbenchSignal')} ${c.processbenchSignal} is not among ${name('signals')} ${c.signals.join(',')}`,
      );
  }
  if (c.keepRollouts && c.cache === 'verdicts')
    throw new UsageError(
      `${name('keepRollouts')} needs rollout texts: ${name('cache')} full (verdicts keeps answers only)`,
    );
  return c;
}

/** The signal parameters of a config (what the pure signal functions take). */
export function signalParamsOf(c: LabelConfig): SignalParams {
  return {
    gamma: c.gamma,
    alpha: c.alpha,
    bestOfN: c.bestOf,
    softThreshold: c.softThreshold,
    zeroOverZero: c.zeroOverZero,
  };
}

/** The early-stop batch size, or null when early stopping is off. */
export function earlyStopBatch(c: Pick<LabelConfig, 'earlyStop'>): number | null {
  if (c.earlyStop === false) return null;
  return c.earlyStop === true ? DEFAULT_EARLY_STOP_BATCH : c.earlyStop;
}

/** The fields of a resolved config that change what a row holds (every one but {@link LABEL_RUN_ONLY_KEYS}). */
export function labelRowSettings(c: LabelConfig): Record<string, unknown> {
  return Object.fromEntries(
    LABEL_CONFIG_KEYS.filter((k) => !LABEL_RUN_ONLY_KEYS.includes(k)).map((k) => [k, c[k]]),
  );
}

/**
 * The recorded settings of a label job (field `job` of every row and of the run record): the
 * config's row settings and what else the rows depend on (`context`: the policy spec, its chat
 * template's id, the data set the input was looked up in).
 */
export function labelJobSettings(c: LabelConfig, context: Record<string, unknown> = {}): JobSettings {
  return methodJobSettings('label', LABEL_SETTINGS, c, context);
}
