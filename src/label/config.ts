import { UsageError } from '../core/errors.js';
import { SEGMENTATIONS, type Segmentation } from '../core/segment.js';
import { type JobSettings, jobSettings } from '../jobs/settings.js';
import type { PromptForm } from '../models/policy.js';
import {
  ANY_CORRECT_SIGNALS,
  DEFAULT_SIGNAL_PARAMS,
  defaultRollouts,
  LABEL_SIGNALS,
  type LabelSignal,
  type SignalParams,
  type ZeroOverZero,
} from './signals.js';

/** How the first error is found: every prefix estimated, or OmegaPRM's bisection. */
export type SearchMode = 'linear' | 'binary';

export type LabelOutputFormat = 'jsonl' | 'processbench';

/** What the model-call cache keeps of each rollout: its text, its verdict only, or nothing (off). */
export type LabelCacheMode = 'full' | 'verdicts' | false;

/**
 * Every setting of rollout labeling, in one object (as {@link SearchConfig} is for search). The
 * library (`labelSolution`, `runLabelJob`), `stepwise label` and the run record all take it
 * through {@link resolveLabelConfig}. Field names are the flags' (`bestOf` is `--best-of`): a
 * recorded setting names the flag that sets it, and `--config run.json` sets flags from them.
 */
export interface LabelConfig {
  /** Signals labeled from the same rollouts (METHODS §2). Default abs-q, rel-ratio, rel-effective. */
  signals: LabelSignal[];
  /**
   * Rollouts per prefix, M. Default: the papers' for the signals asked — 16 (StepWiser) when any of
   * abs-q, rel-ratio, rel-effective is asked, else 8 (Math-Shepherd N = 8, SORM K = 8).
   */
  rollouts: number;
  /** Rel-Ratio threshold γ: positive iff Q̂(i)/Q̂(i−1) > γ. Default 0.8. */
  gamma: number;
  /** Rel-Effective weight α of the best-of-n advantage. Default 0.4. */
  alpha: number;
  /** Rel-Effective best-of-n prover size n. Default 4. */
  bestOf: number;
  /** Math-Shepherd soft: Q̂ at or above which a chunk counts as positive for its first error. Default 0.5. */
  softThreshold: number;
  /** Rel-Ratio when Q̂(i) = Q̂(i−1) = 0 (see {@link SignalParams.zeroOverZero}). Default negative. */
  zeroOverZero: ZeroOverZero;
  /** `linear` (default): every prefix; `binary`: bisect for the first error (abs-q, ms-hard, sorm only). */
  search: SearchMode;
  /**
   * Stop a prefix at its first correct rollout (abs-q, ms-hard, sorm only): `false` (default), or on
   * with batches of this many rollouts (`true`: {@link DEFAULT_EARLY_STOP_BATCH}).
   */
  earlyStop: boolean | number;
  /** Run seed: the rollouts of a prefix depend only on it and the prefix. Default 0. */
  seed: number;
  /** Rollout temperature. Default 1 (StepWiser estimates step values at T = 1). */
  temperature: number;
  /** Token budget of one rollout. Default 2048. */
  maxTokens: number;
  /**
   * How the policy segments, and how prefixes are built. Default: the context's (the policy's in
   * the library; what the input was sampled with in `stepwise label`), else paragraph.
   */
  segmentation: Segmentation;
  /** How the policy is prompted. Default: the context's (the policy's), else raw. */
  promptForm: PromptForm;
  /** Keep every rollout in the output (`chunks[].rollouts = [{text, correct}]`). Default false. */
  keepRollouts: boolean;
  /** `jsonl` (default): labeled solutions; `processbench`: ProcessBench rows (full labels beside them). */
  format: LabelOutputFormat;
  /** The signal whose first error is the ProcessBench label. Unset (default): the first of `signals`. */
  processbenchSignal?: LabelSignal;
  /** What the model-call cache keeps (`full`, default), or `false`: no cache. Does not change a row. */
  cache: LabelCacheMode;
  /** Solutions labeled at once (4× as many requests in flight). Default 8. Does not change a row. */
  concurrency: number;
}

/** Batch size of early stopping when none is given. */
export const DEFAULT_EARLY_STOP_BATCH = 4;

/** The defaults; `rollouts` is filled from the signals, `segmentation` and `promptForm` from the context. */
export const DEFAULT_LABEL_CONFIG: Readonly<Omit<LabelConfig, 'rollouts'>> = Object.freeze({
  signals: ['abs-q', 'rel-ratio', 'rel-effective'] as LabelSignal[],
  gamma: DEFAULT_SIGNAL_PARAMS.gamma,
  alpha: DEFAULT_SIGNAL_PARAMS.alpha,
  bestOf: DEFAULT_SIGNAL_PARAMS.bestOfN,
  softThreshold: DEFAULT_SIGNAL_PARAMS.softThreshold,
  zeroOverZero: DEFAULT_SIGNAL_PARAMS.zeroOverZero,
  search: 'linear',
  earlyStop: false,
  seed: 0,
  temperature: 1,
  maxTokens: 2048,
  segmentation: 'paragraph',
  promptForm: 'raw',
  keepRollouts: false,
  format: 'jsonl',
  cache: 'full',
  concurrency: 8,
});

/** Every field of {@link LabelConfig}, in the order of its declaration. */
export const LABEL_CONFIG_KEYS: readonly (keyof LabelConfig)[] = [
  'signals',
  'rollouts',
  'gamma',
  'alpha',
  'bestOf',
  'softThreshold',
  'zeroOverZero',
  'search',
  'earlyStop',
  'seed',
  'temperature',
  'maxTokens',
  'segmentation',
  'promptForm',
  'keepRollouts',
  'format',
  'processbenchSignal',
  'cache',
  'concurrency',
];

/**
 * Fields that change how fast or what is kept in the cache, never what a row holds: left out of
 * the recorded settings, so a run resumes with another concurrency or cache mode (jobs/settings).
 */
export const LABEL_RUN_ONLY_KEYS: readonly (keyof LabelConfig)[] = ['cache', 'concurrency'];

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

const SEARCH_MODES: readonly SearchMode[] = ['linear', 'binary'];
const FORMATS: readonly LabelOutputFormat[] = ['jsonl', 'processbench'];
const ZERO_OVER_ZERO: readonly ZeroOverZero[] = ['negative', 'no-change'];
const PROMPT_FORMS: readonly PromptForm[] = ['raw', 'chat'];

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
}

/**
 * Defaults filled in and every field checked, alone and together (binary search and early stop
 * decide only some signals; kept rollouts need the full cache). Throws a UsageError naming the
 * field; an unknown field is refused too (a typo must not silently fall back to a default).
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
  const c: LabelConfig = {
    ...DEFAULT_LABEL_CONFIG,
    segmentation: context.segmentation ?? DEFAULT_LABEL_CONFIG.segmentation,
    promptForm: context.promptForm ?? DEFAULT_LABEL_CONFIG.promptForm,
    rollouts: defaultRollouts(signals),
    ...defined,
    signals: [...new Set(signals)],
  };
  const positiveInt = (k: 'rollouts' | 'bestOf' | 'maxTokens' | 'concurrency') => {
    if (!Number.isInteger(c[k]) || c[k] < 1) fail(k, 'must be a positive integer', c[k]);
  };
  positiveInt('rollouts');
  positiveInt('bestOf');
  positiveInt('maxTokens');
  positiveInt('concurrency');
  if (typeof c.gamma !== 'number' || !Number.isFinite(c.gamma) || c.gamma < 0)
    fail('gamma', 'must be a number ≥ 0', c.gamma);
  if (typeof c.alpha !== 'number' || !Number.isFinite(c.alpha)) fail('alpha', 'must be a number', c.alpha);
  if (typeof c.softThreshold !== 'number' || !(c.softThreshold >= 0 && c.softThreshold <= 1))
    fail('softThreshold', 'must be a number between 0 and 1', c.softThreshold);
  if (!ZERO_OVER_ZERO.includes(c.zeroOverZero))
    fail('zeroOverZero', `must be ${ZERO_OVER_ZERO.join(' or ')}`, c.zeroOverZero);
  if (!SEARCH_MODES.includes(c.search)) fail('search', `must be ${SEARCH_MODES.join(' or ')}`, c.search);
  if (
    typeof c.earlyStop !== 'boolean' &&
    !(typeof c.earlyStop === 'number' && Number.isInteger(c.earlyStop) && c.earlyStop >= 1)
  )
    fail('earlyStop', 'must be true, false or a positive batch size', c.earlyStop);
  if (!Number.isInteger(c.seed) || c.seed < 0) fail('seed', 'must be an integer ≥ 0', c.seed);
  if (typeof c.temperature !== 'number' || !Number.isFinite(c.temperature) || c.temperature < 0)
    fail('temperature', 'must be a number ≥ 0', c.temperature);
  if (!SEGMENTATIONS.includes(c.segmentation))
    fail('segmentation', `must be ${SEGMENTATIONS.join(' or ')}`, c.segmentation);
  if (!PROMPT_FORMS.includes(c.promptForm))
    fail('promptForm', `must be ${PROMPT_FORMS.join(' or ')}`, c.promptForm);
  if (typeof c.keepRollouts !== 'boolean') fail('keepRollouts', 'must be true or false', c.keepRollouts);
  if (!FORMATS.includes(c.format)) fail('format', `must be ${FORMATS.join(' or ')}`, c.format);
  if (c.cache !== 'full' && c.cache !== 'verdicts' && c.cache !== false)
    fail('cache', 'must be full, verdicts or false (no cache)', c.cache);

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
    if (!(LABEL_SIGNALS as readonly string[]).includes(c.processbenchSignal))
      fail('processbenchSignal', `must be one of ${LABEL_SIGNALS.join(', ')}`, c.processbenchSignal);
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
  for (const key of Object.keys(context))
    if ((LABEL_CONFIG_KEYS as readonly string[]).includes(key))
      throw new Error(`label settings: "${key}" belongs to the config, not the context`);
  return jobSettings('label', { ...context, ...labelRowSettings(c) });
}
