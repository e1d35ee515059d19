import { UsageError } from '../core/errors.js';

/** The kinds of judge a spec can name. */
export const JUDGE_KINDS = ['generative', 'prm', 'shepherd', 'critic', 'rollout', 'orm'] as const;
export type JudgeKind = (typeof JUDGE_KINDS)[number];

/** One line per kind, for `--help` and the docs. */
export const JUDGE_KIND_HELP: Record<JudgeKind, string> = {
  generative:
    'StepWiser generative judge: analysis then \\boxed{Positive|Negative} per chunk; score = share of Positive',
  prm: 'discriminative PRM over vLLM /pooling (Qwen2.5-Math-PRM input); score = p_pos per step',
  shepherd: "Math-Shepherd token PRM: P('+') vs P('-') after each step tag, over completions logprobs",
  critic: 'ProcessBench critic: whole solution, earliest wrong paragraph in \\boxed{}, maj@k',
  rollout: 'rollout judge: the Monte Carlo value Q̂ of each prefix (policy rollouts) as the score',
  orm: 'outcome model: one score for the whole solution',
};

/**
 * Options a judge spec's query may carry (the rest of the query belongs to the model spec).
 * Keys are snake_case; camelCase is accepted too.
 */
export const JUDGE_OPTION_KEYS = [
  'votes',
  'threshold',
  'temperature',
  'top_p',
  'max_tokens',
  'concurrency',
  'method',
  'top_logprobs',
  'rollouts',
  'signal',
  'rollout_tokens',
  'gamma',
  'alpha',
  'soft_threshold',
] as const;
export type JudgeOptionKey = (typeof JUDGE_OPTION_KEYS)[number];

/** A parsed judge spec: `<kind>:<model spec>[?judge options & model options]`. */
export interface JudgeSpec {
  kind: JudgeKind;
  /** The model spec handed to `createModel` (judge options removed from its query). */
  model: string;
  /** Judge options found in the query, raw strings by snake_case key. */
  options: Partial<Record<JudgeOptionKey, string>>;
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Parse a judge spec. Forms:
 * - `<kind>:<model spec>` — e.g. `generative:openai:Qwen2.5-7B-Instruct`, `prm:openai:Qwen/Qwen2.5-Math-PRM-7B`,
 *   `critic:sim?critic_accuracy=0.7`, `generative:gguf:/models/judge.gguf`;
 * - `sim:<kind>[?…]` — shorthand for `<kind>:sim[?…]` (a simulated judge);
 * - query keys that are judge options ({@link JUDGE_OPTION_KEYS}) are taken out; the others stay
 *   with the model spec (`generative:sim?sens=0.9&votes=4` → model `sim?sens=0.9`, votes 4).
 */
export function parseJudgeSpec(spec: string): JudgeSpec {
  const s = spec.trim();
  const colon = s.indexOf(':');
  if (colon <= 0) {
    throw new UsageError(
      `judge spec "${spec}" has no kind: write <kind>:<model spec>, kind one of ${JUDGE_KINDS.join(', ')} (e.g. generative:openai:my-judge)`,
    );
  }
  let kind = s.slice(0, colon);
  let rest = s.slice(colon + 1);
  if (kind === 'sim') {
    // `sim:critic?x=1` → kind critic over model `sim?x=1`.
    const q = rest.indexOf('?');
    const simKind = q < 0 ? rest : rest.slice(0, q);
    if (!(JUDGE_KINDS as readonly string[]).includes(simKind)) {
      throw new UsageError(`judge spec "${spec}": sim:<kind> needs a kind, one of ${JUDGE_KINDS.join(', ')}`);
    }
    kind = simKind;
    rest = `sim${q < 0 ? '' : rest.slice(q)}`;
  }
  if (!(JUDGE_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`judge spec "${spec}": unknown kind "${kind}" (one of ${JUDGE_KINDS.join(', ')})`);
  }
  if (rest.trim() === '') throw new UsageError(`judge spec "${spec}": no model spec after "${kind}:"`);
  const q = rest.indexOf('?');
  const options: Partial<Record<JudgeOptionKey, string>> = {};
  let model = rest;
  if (q >= 0) {
    const kept: string[] = [];
    for (const part of rest.slice(q + 1).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
      const k = snake(key.trim());
      if ((JUDGE_OPTION_KEYS as readonly string[]).includes(k)) options[k as JudgeOptionKey] = value;
      else kept.push(part);
    }
    model = rest.slice(0, q) + (kept.length > 0 ? `?${kept.join('&')}` : '');
  }
  return { kind: kind as JudgeKind, model, options };
}

/**
 * Whether a model spec asks the simulated world for its oracle PRM (`prm=oracle` among the query
 * options, however spelled: `sim?prm=oracle`, `openai:anything?prm=oracle`, a bare query). The
 * sim server takes `prm=oracle` only from a request's model name, so the spec always shows it.
 */
export function namesOraclePrm(model: string): boolean {
  const q = model.indexOf('?');
  const query = q >= 0 ? model.slice(q + 1) : model.includes('=') ? model : '';
  for (const [key, value] of new URLSearchParams(query))
    if (key.trim().toLowerCase() === 'prm' && value.trim() === 'oracle') return true;
  return false;
}

/**
 * Whether a judge spec names a judge that reads the gold answer: a rollout judge (its rollouts are
 * checked against it), an outcome model of the simulated world (its verdict comes from whether
 * the final answer is right) or the simulated oracle PRM (`prm=oracle`: exact values, computed
 * from the answer). Such a judge must not steer a search silently (`--allow-gold-judge`).
 */
export function judgeReadsGold(spec: string): boolean {
  const parsed = parseJudgeSpec(spec);
  if (parsed.kind === 'rollout') return true;
  if (parsed.kind === 'prm' && namesOraclePrm(parsed.model)) return true;
  return parsed.kind === 'orm' && /^sim(?:$|[:?])|^openai:sim(?:$|[:?[])/.test(parsed.model);
}

/**
 * Whether a judge spec reads the gold answer once its replies turn out to come from the simulated
 * world (the sim server marks them `simulated`): an outcome model (`orm:…`) answered by the sim
 * decides from whether the final answer is right, whatever the spec calls the model
 * (`orm:openai:anything` against `stepwise sim serve`). Decided at run time by
 * {@link StepJudge.simulated}, so the refusal follows what the judge reads, not its spelling.
 */
export function judgeReadsGoldIfSimulated(spec: string): boolean {
  return parseJudgeSpec(spec).kind === 'orm';
}

/** A judge option as a number, checked; undefined when absent. */
export function numberOption(
  spec: JudgeSpec,
  key: JudgeOptionKey,
  check: { min?: number; max?: number; integer?: boolean } = {},
): number | undefined {
  const raw = spec.options[key];
  if (raw === undefined) return undefined;
  const v = Number(raw);
  const bad =
    raw.trim() === '' ||
    !Number.isFinite(v) ||
    (check.integer && !Number.isInteger(v)) ||
    (check.min !== undefined && v < check.min) ||
    (check.max !== undefined && v > check.max);
  if (bad) {
    const range = `${check.integer ? 'an integer' : 'a number'}${check.min !== undefined ? ` ≥ ${check.min}` : ''}${
      check.max !== undefined ? ` ≤ ${check.max}` : ''
    }`;
    throw new UsageError(`judge option ${key}=${raw} must be ${range}`);
  }
  return v;
}
