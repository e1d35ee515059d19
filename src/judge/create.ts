import type { LanguageModel } from '../core/model.js';
import { checkSettings, settingFields } from '../core/settings-schema.js';
import type { AnswerChecker } from '../label/estimate.js';
import type { LabelSignal } from '../label/signals.js';
import { type CreateModelOptions, createModel } from '../models/registry.js';
import { wroteSimulated } from '../models/simulated.js';
import { type JudgeSpec, judgeKindOf, parseJudgeSpec } from './spec.js';
import type { StepJudge } from './types.js';

/**
 * Options of {@link createJudge}. Model options go to `createModel`; judge options override the
 * same keys given in the spec's query (a CLI flag beats the spec).
 */
export interface CreateJudgeOptions extends CreateModelOptions {
  /** Votes per chunk (generative, orm) or samples voted on (critic). */
  votes?: number;
  /** Score threshold of verdicts (a chunk is negative below it). */
  threshold?: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** Base seed of the judge's requests. */
  seed?: number;
  /** Rollout judge: rollouts per prefix (M). */
  rollouts?: number;
  /** Rollout judge: the label signal that turns Q̂ into a verdict. */
  signal?: LabelSignal;
  /** Rollout judge: the answer checker (default: math answer equivalence). */
  checker?: AnswerChecker;
  /** Use this model instead of building one from the spec's model part (tests, in-process sims). */
  model?: LanguageModel;
  /** Critic: prompt template with `{problem}` and `{tagged_response}` slots, sent verbatim. */
  criticTemplate?: string;
}

/**
 * Build a judge from a spec — the one way every area (search, training, web, eval) gets a judge.
 *
 * Spec: `<kind>:<model spec>[?settings]`, kind one of src/judge/kinds.ts (`generative`, `prm`,
 * `shepherd`, `critic`, `rollout`, `orm`); the model spec is anything `createModel` takes
 * (`openai:<model>` with a base URL, `gguf:<file>`, `sim[?…]`). `sim:<kind>[?…]` is short for
 * `<kind>:sim[?…]`. Query keys that are settings of a judge kind are checked against the kind's
 * schema and taken out; the rest stays with the model spec. Options given here (a CLI flag) beat
 * the same setting in the spec; an option the kind has no setting for is ignored (`votes` of a
 * PRM). See docs/judges.md.
 *
 * @example
 * const judge = await createJudge('generative:openai:Qwen2.5-7B-Instruct?votes=8', { baseUrl: 'http://127.0.0.1:8000/v1' });
 * const judge = await createJudge('critic:sim?critic_accuracy=0.7');
 */
export async function createJudge(spec: string, options: CreateJudgeOptions = {}): Promise<StepJudge> {
  const parsed: JudgeSpec = parseJudgeSpec(spec);
  const kind = judgeKindOf(parsed.kind);
  const {
    model: given,
    votes,
    threshold,
    temperature,
    topP,
    maxTokens,
    seed,
    rollouts,
    signal,
    checker,
    criticTemplate,
    ...modelOptions
  } = options;
  // A flag beats the spec: the options this kind has a setting for (under its own name).
  const fields = new Set(settingFields(kind.settings).map((f) => f.key));
  const overrides: Record<string, unknown> = {};
  for (const [key, value] of Object.entries({
    votes,
    threshold,
    temperature,
    topP,
    maxTokens,
    rollouts,
    signal,
  })) {
    const field = kind.aliases?.[key] ?? key;
    if (value !== undefined && fields.has(field)) overrides[field] = value;
  }
  checkSettings(kind.settings, overrides, (f) => f, `${parsed.kind} judge`);
  const settings = kind.settings.parse({ ...parsed.settings, ...overrides }) as Record<string, unknown>;
  const model =
    given ??
    (await createModel(parsed.model, {
      ...modelOptions,
      concurrency: modelOptions.concurrency ?? (settings.concurrency as number | undefined),
    }));

  // Simulated by what the model is: a sim backend or sim-spec name, or — for a judge reached as
  // `openai:anything` against `stepwise sim serve` — any reply the sim server marked as its own.
  const named = isSimulatedModel(model);
  let marked = false;
  const watched = watchReplies(model, () => {
    marked = true;
  });
  const built = kind.create(watched, settings, { name: spec.trim(), seed, checker, criticTemplate });
  return Object.defineProperty({ ...built, model }, 'simulated', {
    get: () => named || marked,
    enumerable: true,
  });
}

/**
 * `model` with every generate result looked at: `onSimulated` is called when a sample came from
 * the simulated world (a marked sim-server reply, also when served from the cache). Everything
 * else is the model's own, bound to it.
 */
function watchReplies(model: LanguageModel, onSimulated: () => void): LanguageModel {
  return new Proxy(model, {
    get(target, prop) {
      if (prop === 'generate')
        return async (...args: Parameters<LanguageModel['generate']>) => {
          const result = await target.generate(...args);
          if (wroteSimulated(result)) onSimulated();
          return result;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * A model is the simulated world when its backend is `sim`, or when the served model's name is a
 * sim spec (`stepwise sim serve` takes per-request options in the model field).
 */
export function isSimulatedModel(model: LanguageModel): boolean {
  return model.provider === 'sim' || /^sim(?:$|[:?[])/.test(model.modelId);
}
