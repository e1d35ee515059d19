import { UsageError } from '../core/errors.js';
import type { LanguageModel } from '../core/model.js';
import type { AnswerChecker } from '../label/estimate.js';
import { LABEL_SIGNALS, type LabelSignal } from '../label/signals.js';
import { type CreateModelOptions, createModel } from '../models/registry.js';
import { wroteSimulated } from '../models/simulated.js';
import { createCriticJudge } from './critic.js';
import { createGenerativeJudge } from './generative.js';
import { createOrmJudge } from './orm.js';
import { createPoolingPrmJudge } from './prm.js';
import { createRolloutJudge } from './rollout.js';
import { createShepherdJudge } from './shepherd.js';
import { type JudgeSpec, numberOption, parseJudgeSpec } from './spec.js';
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

function pick<T>(flag: T | undefined, fromSpec: T | undefined): T | undefined {
  return flag !== undefined ? flag : fromSpec;
}

/**
 * Build a judge from a spec — the one way every area (search, training, web, eval) gets a judge.
 *
 * Spec: `<kind>:<model spec>[?options]`, kind one of `generative`, `prm`, `shepherd`, `critic`,
 * `rollout`, `orm`; the model spec is anything `createModel` takes (`openai:<model>` with a base
 * URL, `gguf:<file>`, `sim[?…]`). `sim:<kind>[?…]` is short for `<kind>:sim[?…]`. Judge options in
 * the query (`votes`, `threshold`, `temperature`, `top_p`, `max_tokens`, `concurrency`, `method`,
 * `top_logprobs`, `rollouts`, `signal`, `rollout_tokens`, `gamma`, `alpha`, `soft_threshold`) are taken out; the rest stays with the
 * model spec. See docs/judges.md.
 *
 * @example
 * const judge = await createJudge('generative:openai:Qwen2.5-7B-Instruct?votes=8', { baseUrl: 'http://127.0.0.1:8000/v1' });
 * const judge = await createJudge('critic:sim?critic_accuracy=0.7');
 */
export async function createJudge(spec: string, options: CreateJudgeOptions = {}): Promise<StepJudge> {
  const parsed: JudgeSpec = parseJudgeSpec(spec);
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
    ...modelOptions
  } = options;
  const specVotes = numberOption(parsed, 'votes', { min: 1, integer: true });
  const specThreshold = numberOption(parsed, 'threshold');
  const common = {
    name: spec.trim(),
    temperature: pick(temperature, numberOption(parsed, 'temperature', { min: 0 })),
    topP: pick(topP, numberOption(parsed, 'top_p', { min: 0, max: 1 })),
    maxTokens: pick(maxTokens, numberOption(parsed, 'max_tokens', { min: 1, integer: true })),
    seed,
  };
  const v = pick(votes, specVotes);
  const t = pick(threshold, specThreshold);
  if (v !== undefined && (!Number.isInteger(v) || v < 1))
    throw new UsageError(`votes must be a positive integer, got ${v}`);
  if (t !== undefined && !Number.isFinite(t)) throw new UsageError(`threshold must be a number, got ${t}`);
  const modelConcurrency = numberOption(parsed, 'concurrency', { min: 1, integer: true });
  const model =
    given ??
    (await createModel(parsed.model, {
      ...modelOptions,
      concurrency: modelOptions.concurrency ?? modelConcurrency,
    }));

  // Simulated by what the model is: a sim backend or sim-spec name, or — for a judge reached as
  // `openai:anything` against `stepwise sim serve` — any reply the sim server marked as its own.
  const named = isSimulatedModel(model);
  let marked = false;
  const watched = watchReplies(model, () => {
    marked = true;
  });
  const built = buildJudge(parsed, watched, {
    common,
    v,
    t,
    seed,
    rollouts,
    signal,
    checker,
    maxTokens,
    modelConcurrency,
    criticTemplate: options.criticTemplate,
  });
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

function buildJudge(
  parsed: JudgeSpec,
  model: LanguageModel,
  o: {
    common: { name: string; temperature?: number; topP?: number; maxTokens?: number; seed?: number };
    v?: number;
    t?: number;
    seed?: number;
    rollouts?: number;
    signal?: LabelSignal;
    checker?: AnswerChecker;
    maxTokens?: number;
    modelConcurrency?: number;
    criticTemplate?: string;
  },
): StepJudge {
  const { common, v, t, seed, rollouts, signal, checker, maxTokens, modelConcurrency } = o;
  switch (parsed.kind) {
    case 'generative':
      return createGenerativeJudge(model, {
        ...common,
        votes: v,
        threshold: t,
        concurrency: modelConcurrency,
      });
    case 'prm':
      return createPoolingPrmJudge(model, { name: common.name, threshold: t });
    case 'shepherd': {
      const method = parsed.options.method;
      if (method !== undefined && method !== 'logprobs' && method !== 'score')
        throw new UsageError(`judge option method=${method}: expected logprobs or score`);
      return createShepherdJudge(model, {
        name: common.name,
        threshold: t,
        method,
        topLogprobs: numberOption(parsed, 'top_logprobs', { min: 2, integer: true }),
      });
    }
    case 'critic':
      return createCriticJudge(model, { ...common, votes: v, template: o.criticTemplate });
    case 'orm':
      return createOrmJudge(model, { ...common, votes: v, threshold: t });
    case 'rollout': {
      const sig = pick(signal, parsed.options.signal as LabelSignal | undefined);
      if (sig !== undefined && !(LABEL_SIGNALS as readonly string[]).includes(sig))
        throw new UsageError(`judge option signal=${sig}: expected one of ${LABEL_SIGNALS.join(', ')}`);
      return createRolloutJudge(model, {
        name: common.name,
        rollouts: pick(rollouts, numberOption(parsed, 'rollouts', { min: 1, integer: true })),
        signal: sig,
        params: {
          gamma: numberOption(parsed, 'gamma', { min: 0 }),
          alpha: numberOption(parsed, 'alpha', { min: 0 }),
          softThreshold: numberOption(parsed, 'soft_threshold', { min: 0, max: 1 }),
        },
        temperature: common.temperature,
        topP: common.topP,
        maxTokens: pick(maxTokens, numberOption(parsed, 'rollout_tokens', { min: 1, integer: true })),
        seed,
        checker,
      });
    }
  }
}
