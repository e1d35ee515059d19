import { UsageError } from '../core/errors.js';
import { checkSettings, settingFields } from '../core/settings-schema.js';
import { queryEntries, queryKeyOf, queryValue } from '../core/spec-query.js';
import { JUDGE_KIND_DEFINITIONS } from './kinds.js';
import type { JudgeKindDefinition } from './types.js';

/** The kinds of judge a spec can name (src/judge/kinds.ts). */
export const JUDGE_KINDS = JUDGE_KIND_DEFINITIONS.map((k) => k.kind) as ReadonlyArray<
  (typeof JUDGE_KIND_DEFINITIONS)[number]['kind']
>;
export type JudgeKind = (typeof JUDGE_KINDS)[number];

/** One line per kind, for `--help` and the docs. */
export const JUDGE_KIND_HELP = Object.fromEntries(
  JUDGE_KIND_DEFINITIONS.map((k) => [k.kind, k.help]),
) as Record<JudgeKind, string>;

/** `top_p` (or `topP`) → `topP`. */
function fieldOf(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The definition of a kind: its settings schema and factory. */
export function judgeKindOf(kind: JudgeKind): JudgeKindDefinition {
  const found = JUDGE_KIND_DEFINITIONS.find((k) => k.kind === kind);
  if (!found) throw new UsageError(`unknown judge kind "${kind}" (one of ${JUDGE_KINDS.join(', ')})`);
  return found as unknown as JudgeKindDefinition;
}

/**
 * Query keys that are judge settings of some kind (snake_case; camelCase is accepted too): they
 * are taken out of a spec's query, the rest belong to the model spec.
 */
export const JUDGE_OPTION_KEYS: readonly string[] = [
  ...new Set(JUDGE_KIND_DEFINITIONS.flatMap((k) => settingFields(k.settings).map((f) => queryKeyOf(f.key)))),
];

/** A parsed judge spec: `<kind>:<model spec>[?judge settings & model options]`. */
export interface JudgeSpec {
  kind: JudgeKind;
  /** The model spec handed to the provider registry (judge settings removed from its query). */
  model: string;
  /** The judge settings the query gave, checked against the kind's schema, keyed by field (`topP`). */
  settings: Record<string, unknown>;
}

/**
 * Parse a judge spec. Forms:
 * - `<kind>:<model spec>` — e.g. `generative:openai:Qwen2.5-7B-Instruct`, `prm:openai:Qwen/Qwen2.5-Math-PRM-7B`,
 *   `critic:sim?critic_accuracy=0.7`, `generative:gguf:/models/judge.gguf`;
 * - `sim:<kind>[?…]` — shorthand for `<kind>:sim[?…]` (a simulated judge);
 * - query keys that are judge settings ({@link JUDGE_OPTION_KEYS}) are taken out and checked
 *   against the kind's schema (a bad value, or a setting of another kind, is a usage error naming
 *   the key); the others stay with the model spec (`generative:sim?sens=0.9&votes=4` → model
 *   `sim?sens=0.9`, votes 4).
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
  const definition = judgeKindOf(kind as JudgeKind);
  const own = new Map(settingFields(definition.settings).map((f) => [f.key, f]));
  const q = rest.indexOf('?');
  const settings: Record<string, unknown> = {};
  const written: Record<string, string> = {};
  let model = rest;
  if (q >= 0) {
    const kept: string[] = [];
    // Judge settings are read camelCase or snake_case (`topP`, `top_p`), unlike a provider's.
    for (const { part, key: snake, value } of queryEntries(rest.slice(q + 1), 'camel-to-snake')) {
      if (!JUDGE_OPTION_KEYS.includes(snake)) {
        kept.push(part);
        continue;
      }
      const field = fieldOf(snake);
      const f = own.get(field);
      if (!f)
        throw new UsageError(
          `judge spec "${spec}": ${snake} is not a setting of a ${kind} judge (its settings: ${[...own.keys()].map(queryKeyOf).join(', ')})`,
        );
      // Not strict: a bad value reaches checkSettings, whose message names `judge option key=value`.
      settings[field] = queryValue(f, value);
      written[field] = value;
    }
    model = rest.slice(0, q) + (kept.length > 0 ? `?${kept.join('&')}` : '');
  }
  checkSettings(
    definition.settings,
    settings,
    (f) => `judge option ${queryKeyOf(f)}=${written[f]}`,
    `${kind} judge`,
  );
  return { kind: kind as JudgeKind, model, settings };
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
