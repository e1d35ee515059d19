import type { LanguageModel } from '../core/model.js';
import { checkSettings, settingFields } from '../core/settings-schema.js';
import type { AnswerChecker } from '../label/estimate.js';
import type { LabelSignal } from '../label/signals.js';
import { wrapModel } from '../models/middleware.js';
import type { ModelOptions, ProviderRegistry } from '../models/registry.js';
import { ledgerOf, provenanceMiddleware } from '../models/simulated.js';
import { type JudgeSpec, judgeKindOf, parseJudgeSpec } from './spec.js';
import type { StepJudge } from './types.js';

/**
 * Options of {@link createJudge}. Model options go to `providers.languageModel`; judge options
 * override the same keys given in the spec's query (a CLI flag beats the spec).
 */
export interface CreateJudgeOptions extends ModelOptions {
  /** The registry the spec's model part is built with (not needed when `model` is given). */
  providers?: ProviderRegistry;
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
 * `shepherd`, `critic`, `rollout`, `orm`); the model spec is anything the provider registry takes
 * (`openai:<model>` with a base URL, `gguf:<file>`, `sim[?…]`). `sim:<kind>[?…]` is short for
 * `<kind>:sim[?…]`. Query keys that are settings of a judge kind are checked against the kind's
 * schema and taken out; the rest stays with the model spec. Options given here (a CLI flag) beat
 * the same setting in the spec; an option the kind has no setting for is ignored (`votes` of a
 * PRM). See docs/judges.md.
 *
 * @example
 * const judge = await createJudge('generative:openai:Qwen2.5-7B-Instruct?votes=8', { providers, settings: { baseUrl: 'http://127.0.0.1:8000/v1' } });
 * const judge = await createJudge('critic:sim?critic_accuracy=0.7', { providers });
 */
export async function createJudge(spec: string, options: CreateJudgeOptions = {}): Promise<StepJudge> {
  const parsed: JudgeSpec = parseJudgeSpec(spec);
  const kind = judgeKindOf(parsed.kind);
  const {
    model: given,
    providers,
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
  if (!given && !providers)
    throw new Error(`createJudge("${spec}"): pass a provider registry (options.providers) or a model`);
  const model =
    given ??
    (await providers!.languageModel(parsed.model, {
      ...modelOptions,
      settings: {
        ...modelOptions.settings,
        concurrency: modelOptions.settings?.concurrency ?? (settings.concurrency as number | undefined),
      },
    }));

  // The judge's world is its ledger's: what the model is (a sim backend or sim-spec name), and —
  // for a judge reached as `openai:anything` against `stepwise sim serve` — any reply the sim
  // server marked as its own.
  const ledger = ledgerOf(model);
  const watched = wrapModel(
    model,
    provenanceMiddleware(() => ledger.saw('sim')),
  );
  const built = kind.create(watched, settings, { name: spec.trim(), seed, checker, criticTemplate });
  return Object.defineProperties({ ...built, model } as StepJudge, {
    simulated: { get: () => ledger.simulated, enumerable: true },
    world: { get: () => ledger.world, enumerable: false },
  });
}
