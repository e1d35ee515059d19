import { UsageError } from '../core/errors.js';

/**
 * Every knob of the simulated reasoning world: how problems are generated, how the policy errs,
 * and how the simulated judges answer. Plain data; {@link parseSimSpec} reads it from a spec
 * string such as `sim?step_error=0.1&sensitivity=0.9`.
 */
export interface SimOptions {
  /** Seed of everything not seeded by a request (problem sets, unseeded requests, fault injection). */
  seed: number;
  /** Fewest operations (steps) in a generated problem. */
  minSteps: number;
  /** Most operations (steps) in a generated problem. */
  maxSteps: number;
  /** Base step-error rate: the mean over problems of the per-operation error probability is about this. */
  stepError: number;
  /** Spread of per-problem difficulty: the difficulty factor is exp(s·(2u−1)), normalised to mean 1. */
  difficultySpread: number;
  /**
   * Share of the step-error rate that comes from misconceptions: steps of a problem that are traps
   * (a fixed wrong result the policy falls into again and again), the rest independent slips.
   */
  misconception: number;
  /** Probability that the policy falls into a trap step's misconception each time it (re)samples that step. */
  recur: number;
  /**
   * How judge errors grow with difficulty: every judge's error rate on a chunk is its base rate ×
   * δ^judge_difficulty (δ = the chunk's step difficulty, mean about 1); 0 = the same rates everywhere.
   */
  judgeDifficulty: number;
  /** Probability that the policy writes a check chunk after an operation. */
  checkRate: number;
  /** Probability that a check catches an existing error (and restores the right number). */
  catchRate: number;
  /** Probability that a check on a correct number wrongly "corrects" it (a new error). */
  falseAlarm: number;
  /** Probability of a harmless restatement chunk before an operation. */
  restateRate: number;
  /** Generative judge: P(Negative | chunk wrong). */
  sensitivity: number;
  /** Generative judge: P(Positive | chunk right). */
  specificity: number;
  /** Generative judge and critic: probability that a reply has no parsable verdict. */
  formatFailure: number;
  /** Critic: probability of answering the true earliest wrong paragraph. */
  criticAccuracy: number;
  /** PRM: standard deviation of the Gaussian noise added to the score's logit. */
  prmNoise: number;
  /**
   * PRM: what the score tracks — `value` (the success probability of the state the PRM believes the
   * solution is in; final step by the outcome model's rates), `step` (the chunk's own correctness as
   * the PRM perceives it) or `oracle` (the exact success probability: an oracle, not a model).
   */
  prmTarget: SimPrmTarget;
  /** PRM: P(it perceives a wrong chunk as wrong), before difficulty. */
  prmSensitivity: number;
  /** PRM: P(it perceives a right chunk as right), before difficulty. */
  prmSpecificity: number;
  /** Outcome model: P(Incorrect | final answer wrong). */
  ormSensitivity: number;
  /** Outcome model: P(Correct | final answer right). */
  ormSpecificity: number;
}

/** What the simulated PRM's score tracks (see {@link SimOptions.prmTarget}). */
export type SimPrmTarget = 'value' | 'step' | 'oracle';

/** The PRM targets, for messages and docs. */
export const SIM_PRM_TARGETS: readonly SimPrmTarget[] = ['value', 'step', 'oracle'];

/**
 * Defaults: a 10% step-error policy whose errors are half misconceptions (recurring with
 * probability 0.7 on a trap step), and 0.9 / 0.9 judges whose errors grow with step difficulty.
 */
export const DEFAULT_SIM_OPTIONS: Readonly<SimOptions> = Object.freeze({
  seed: 0,
  minSteps: 3,
  maxSteps: 12,
  stepError: 0.1,
  difficultySpread: 1,
  misconception: 0.5,
  recur: 0.7,
  judgeDifficulty: 1,
  checkRate: 0.15,
  catchRate: 0.5,
  falseAlarm: 0,
  restateRate: 0.15,
  sensitivity: 0.9,
  specificity: 0.9,
  formatFailure: 0,
  criticAccuracy: 0.8,
  prmNoise: 1,
  prmTarget: 'value',
  prmSensitivity: 0.9,
  prmSpecificity: 0.9,
  ormSensitivity: 0.9,
  ormSpecificity: 0.9,
});

type NumericKey = Exclude<keyof SimOptions, 'prmTarget'>;

/** Spec keys (snake_case, with short aliases) → option names. */
const KEYS: Record<string, NumericKey> = {
  seed: 'seed',
  min_steps: 'minSteps',
  max_steps: 'maxSteps',
  step_error: 'stepError',
  difficulty_spread: 'difficultySpread',
  misconception: 'misconception',
  recur: 'recur',
  judge_difficulty: 'judgeDifficulty',
  check_rate: 'checkRate',
  catch_rate: 'catchRate',
  false_alarm: 'falseAlarm',
  restate_rate: 'restateRate',
  sensitivity: 'sensitivity',
  sens: 'sensitivity',
  specificity: 'specificity',
  spec: 'specificity',
  format_failure: 'formatFailure',
  format_fail: 'formatFailure',
  critic_accuracy: 'criticAccuracy',
  critic_acc: 'criticAccuracy',
  prm_noise: 'prmNoise',
  prm_sensitivity: 'prmSensitivity',
  prm_sens: 'prmSensitivity',
  prm_specificity: 'prmSpecificity',
  prm_spec: 'prmSpecificity',
  orm_sensitivity: 'ormSensitivity',
  orm_sens: 'ormSensitivity',
  orm_specificity: 'ormSpecificity',
  orm_spec: 'ormSpecificity',
};

/** Options that are probabilities and must lie in [0, 1]. */
const PROBABILITIES: readonly NumericKey[] = [
  'stepError',
  'misconception',
  'recur',
  'checkRate',
  'catchRate',
  'falseAlarm',
  'restateRate',
  'sensitivity',
  'specificity',
  'formatFailure',
  'criticAccuracy',
  'prmSensitivity',
  'prmSpecificity',
  'ormSensitivity',
  'ormSpecificity',
];

/** The spec keys accepted after `sim?` (for help texts and docs). */
export const SIM_SPEC_KEYS: readonly string[] = [...Object.keys(KEYS), 'prm', 'judge'];

/** Check ranges; throws UsageError naming the bad option. */
export function validateSimOptions(o: SimOptions): SimOptions {
  for (const k of PROBABILITIES) {
    const v = o[k];
    if (!(Number.isFinite(v) && v >= 0 && v <= 1))
      throw new UsageError(`sim: ${k} must be in [0, 1], got ${v}`);
  }
  if (!Number.isInteger(o.minSteps) || o.minSteps < 1)
    throw new UsageError('sim: min_steps must be an integer ≥ 1');
  if (!Number.isInteger(o.maxSteps) || o.maxSteps < o.minSteps || o.maxSteps > 40)
    throw new UsageError('sim: max_steps must be an integer between min_steps and 40');
  if (!Number.isFinite(o.difficultySpread) || o.difficultySpread < 0 || o.difficultySpread > 5)
    throw new UsageError('sim: difficulty_spread must be in [0, 5]');
  if (!Number.isFinite(o.judgeDifficulty) || o.judgeDifficulty < 0 || o.judgeDifficulty > 5)
    throw new UsageError('sim: judge_difficulty must be in [0, 5]');
  if (!Number.isFinite(o.prmNoise) || o.prmNoise < 0) throw new UsageError('sim: prm_noise must be ≥ 0');
  if (!Number.isInteger(o.seed)) throw new UsageError('sim: seed must be an integer');
  if (!SIM_PRM_TARGETS.includes(o.prmTarget))
    throw new UsageError(`sim: prm must be ${SIM_PRM_TARGETS.join(', ')}, got ${String(o.prmTarget)}`);
  return o;
}

/**
 * Apply `key=value` pairs (a URL query string without the `?`) on top of `base`. Unknown keys
 * are a UsageError so typos do not pass silently. `judge=perfect` sets sensitivity and
 * specificity to 1 and format failures to 0; `prm=value|step|oracle` picks the PRM target
 * (`oracle` reads exact values: see docs/sim.md).
 */
export function applySimQuery(base: SimOptions, query: string): SimOptions {
  const out: SimOptions = { ...base };
  if (query.trim() === '') return out;
  for (const [key, raw] of new URLSearchParams(query)) {
    const k = key.trim().toLowerCase();
    if (k === 'judge') {
      if (raw !== 'perfect') throw new UsageError(`sim: judge=${raw} is unknown (only judge=perfect)`);
      out.sensitivity = 1;
      out.specificity = 1;
      out.formatFailure = 0;
      continue;
    }
    if (k === 'prm') {
      const target = SIM_PRM_TARGETS.find((t) => t === raw);
      if (!target) throw new UsageError(`sim: prm=${raw} is unknown (${SIM_PRM_TARGETS.join(', ')})`);
      out.prmTarget = target;
      continue;
    }
    const name = KEYS[k];
    if (!name) throw new UsageError(`sim: unknown option "${key}" (known: ${SIM_SPEC_KEYS.join(', ')})`);
    const v = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(v)) throw new UsageError(`sim: ${key}=${raw} is not a number`);
    out[name] = v;
  }
  return validateSimOptions(out);
}

/** A parsed `sim` model spec. */
export interface SimSpec {
  /** The model name after `sim:` (default `sim`); informational. */
  name: string;
  options: SimOptions;
}

/**
 * Parse a sim model spec: `sim`, `sim:<name>`, `sim?k=v&…` or `sim:<name>?k=v&…`. A bare
 * query (`step_error=0.2`) or a name without the `sim` prefix is also accepted, since the
 * server receives per-request options in the `model` field.
 */
export function parseSimSpec(spec: string, base: SimOptions = DEFAULT_SIM_OPTIONS): SimSpec {
  const s = spec.trim();
  const q = s.indexOf('?');
  let head = q < 0 ? s : s.slice(0, q);
  const query = q < 0 ? (s.includes('=') ? s : '') : s.slice(q + 1);
  if (q < 0 && s.includes('=')) head = '';
  let name = 'sim';
  if (head.startsWith('sim:')) name = head.slice(4) || 'sim';
  else if (head !== '' && head !== 'sim') name = head;
  return { name, options: applySimQuery({ ...base }, query) };
}

/** The spec string that reproduces `options` (only the keys that differ from the defaults). */
export function formatSimSpec(options: Partial<SimOptions>): string {
  const parts: string[] = [];
  const reverse = new Map<NumericKey, string>();
  for (const [k, v] of Object.entries(KEYS)) if (!reverse.has(v)) reverse.set(v, k);
  for (const [name, key] of reverse) {
    const v = options[name];
    if (v !== undefined && v !== DEFAULT_SIM_OPTIONS[name]) parts.push(`${key}=${v}`);
  }
  if (options.prmTarget && options.prmTarget !== DEFAULT_SIM_OPTIONS.prmTarget)
    parts.push(`prm=${options.prmTarget}`);
  return parts.length === 0 ? 'sim' : `sim?${parts.join('&')}`;
}

/** Merge partial options over the defaults and validate. */
export function resolveSimOptions(partial: Partial<SimOptions> = {}): SimOptions {
  const out = { ...DEFAULT_SIM_OPTIONS };
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return validateSimOptions(out);
}
