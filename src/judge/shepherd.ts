import { z } from 'zod';
import { StepwiseError, UnsupportedCapabilityError } from '../core/errors.js';
import type { LanguageModel, TokenLogprob } from '../core/model.js';
import { setting } from '../core/settings-schema.js';
import type { Judgment } from '../core/types.js';
import { renderShepherdInput } from '../prompts/prm.js';
import {
  chunksToJudge,
  DEFAULT_THRESHOLD,
  defineJudge,
  type JudgeCost,
  judgeEach,
  throwIfAborted,
  verdictOf,
} from './common.js';
import { JUDGE_MODEL_SETTINGS, thresholdSetting } from './settings.js';
import { defineJudgeKind, type JudgeOptions, type StepJudge } from './types.js';

/** Settings of the Math-Shepherd token-probability PRM. */
export interface ShepherdPrmSettings {
  name?: string;
  /** A chunk is negative when P(+) / (P(+) + P(−)) is below this. Default 0.5. */
  threshold?: number;
  /** Top alternatives asked for at the tag position (vLLM caps this at 20 by default). Default 20. */
  topLogprobs?: number;
  /** `logprobs`: one-token completion with top log-probabilities; `score`: the backend's score(). Default: logprobs when available. */
  method?: 'logprobs' | 'score';
}

/** The settings a `shepherd:` spec's query may carry. */
export const SHEPHERD_SETTINGS = z.object({
  threshold: thresholdSetting(),
  method: setting(z.enum(['logprobs', 'score']).optional(), {
    help: "logprobs: top alternatives of a 1-token completion; score: the backend's score() (echo + logprobs, or a local GGUF)",
    arg: 'method',
    defaultText: 'logprobs when the backend returns them, else score',
    requirement: 'logprobs or score',
  }),
  topLogprobs: setting(z.number().int().min(2).default(20), {
    help: 'alternatives asked for at the step tag (vLLM caps this at 20 unless --max-logprobs)',
    arg: 'n',
  }),
});
const DEFAULTS = SHEPHERD_SETTINGS.parse({});

/** The good and bad label tokens of Math-Shepherd. */
const GOOD = '+';
const BAD = '-';

/** log(e^a + e^b) without overflow; −∞ when both are −∞. */
function logAddExp(a: number, b: number): number {
  if (a === Number.NEGATIVE_INFINITY) return b;
  if (b === Number.NEGATIVE_INFINITY) return a;
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

/**
 * P(+) / (P(+) + P(−)) from the alternatives at one position (tokens compared after trimming
 * whitespace, so `▁+`-style variants count). Null when neither label token is among them.
 */
export function shepherdScoreFromTop(
  alternatives: ReadonlyArray<{ token: string; logprob: number }>,
): number | null {
  let good = Number.NEGATIVE_INFINITY;
  let bad = Number.NEGATIVE_INFINITY;
  for (const a of alternatives) {
    const t = a.token.replace(/^[\s▁Ġ]+|\s+$/g, '');
    if (t === GOOD) good = logAddExp(good, a.logprob);
    else if (t === BAD) bad = logAddExp(bad, a.logprob);
  }
  if (good === Number.NEGATIVE_INFINITY && bad === Number.NEGATIVE_INFINITY) return null;
  if (bad === Number.NEGATIVE_INFINITY) return 1;
  if (good === Number.NEGATIVE_INFINITY) return 0;
  return 1 / (1 + Math.exp(bad - good));
}

/**
 * The Math-Shepherd PRM (METHODS §3): steps written `Step i: … ки`; the model's probability of
 * `+` against `-` as the token after each step tag is the step's score (the softmax over the two
 * label tokens, as in the Math-Shepherd reference code).
 *
 * Over HTTP this needs `/v1/completions` with `logprobs` (top alternatives; vLLM, SGLang,
 * llama.cpp, and Ollama since v0.12.11, whose `logprobs: k` is read as k top alternatives):
 * one one-token request per step, each prompt the input up to and including that step's tag
 * (prefix caching makes the shared prefixes cheap). Backends with `score()` (local GGUF) can score
 * `+` and `-` directly.
 * A step where neither token is among the alternatives is a format failure, scored 0.5 (neutral).
 */
export function createShepherdJudge(model: LanguageModel, settings: ShepherdPrmSettings = {}): StepJudge {
  const threshold = settings.threshold ?? DEFAULT_THRESHOLD;
  const name = settings.name ?? `shepherd:${model.provider}:${model.modelId}`;
  const method = settings.method ?? (model.capabilities.logprobs ? 'logprobs' : 'score');

  async function scoreStep(prefix: string, options: JudgeOptions, cost: JudgeCost): Promise<number | null> {
    if (method === 'score') {
      if (!model.score || !model.capabilities.score) {
        throw new UnsupportedCapabilityError(
          { provider: model.provider, model: model.modelId, capability: 'score' },
          `model ${model.provider}:${model.modelId} gives neither logprobs nor score(): a shepherd: judge needs ` +
            '/v1/completions with logprobs (vLLM, SGLang, llama.cpp) or a local GGUF model',
        );
      }
      const good = await model.score(prefix, GOOD, { signal: options.signal });
      const bad = await model.score(prefix, BAD, { signal: options.signal });
      cost.record(good.usage, 1);
      cost.record(bad.usage, 1);
      return 1 / (1 + Math.exp(bad.logprob - good.logprob));
    }
    const out = await model.generate(
      {
        prompt: prefix,
        n: 1,
        temperature: 0,
        maxTokens: 1,
        logprobs: settings.topLogprobs ?? DEFAULTS.topLogprobs,
      },
      { signal: options.signal },
    );
    cost.record(out.usage, out.samples.length, out.cached, out);
    const first: TokenLogprob | undefined = out.samples[0]?.logprobs?.[0];
    if (!first) {
      throw new StepwiseError(
        `model ${model.provider}:${model.modelId} returned no logprobs: a shepherd: judge needs a server that ` +
          'returns top log-probabilities on /v1/completions (vLLM, SGLang, llama.cpp, Ollama 0.12.11 or later)',
      );
    }
    const alternatives = [...(first.top ?? [])];
    // The sampled token is usually among the alternatives already; add it only when it is not.
    if (!alternatives.some((a) => a.token === first.token))
      alternatives.push({ token: first.token, logprob: first.logprob });
    return shepherdScoreFromTop(alternatives);
  }

  return defineJudge(model, { name, scalar: true, threshold }, (problem, chunks, options, cost) =>
    judgeEach(chunksToJudge(chunks.length, options), options, async (i): Promise<Judgment> => {
      throwIfAborted(options.signal);
      const score = await scoreStep(
        renderShepherdInput(problem.question, chunks.slice(0, i + 1)),
        options,
        cost,
      );
      return score === null
        ? { chunkIndex: i, verdict: 'neutral', score: 0.5, formatFailures: 1, votes: 1 }
        : { chunkIndex: i, verdict: verdictOf(score, threshold), score, votes: 1 };
    }),
  );
}

/** `shepherd:<model spec>[?k=v]`. */
export const SHEPHERD_KIND = defineJudgeKind({
  kind: 'shepherd',
  help: "Math-Shepherd token PRM: P('+') vs P('-') after each step tag, over completions logprobs",
  settings: SHEPHERD_SETTINGS.extend(JUDGE_MODEL_SETTINGS.shape),
  create: (model, s, c) =>
    createShepherdJudge(model, {
      name: c.name,
      threshold: s.threshold,
      method: s.method,
      topLogprobs: s.topLogprobs,
    }),
});
