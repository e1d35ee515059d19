import { z } from 'zod';
import type { LanguageModel, Sample } from '../core/model.js';
import type { Judgment, Problem } from '../core/types.js';
import { parseJudgeVerdict, renderJudgeMessages } from '../prompts/judge.js';
import {
  chunksToJudge,
  defineJudge,
  type JudgeCost,
  judgeEach,
  throwIfAborted,
  verdictOf,
} from './common.js';
import {
  JUDGE_MODEL_SETTINGS,
  maxTokensSetting,
  temperatureSetting,
  thresholdSetting,
  topPSetting,
  votesSetting,
} from './settings.js';
import { defineJudgeKind, type JudgeOptions, type StepJudge } from './types.js';

/** Settings of the StepWiser generative judge. */
export interface GenerativeJudgeSettings {
  /** Name reported by the judge (its spec). */
  name?: string;
  /** Sampled judgments per chunk (k; one request with n = k). Default 1 (the paper's setting). */
  votes?: number;
  /** A chunk is negative when its share of Positive votes is below this. Default 0.5. */
  threshold?: number;
  /** Default 0 with one vote (greedy), 1.0 with several (votes must differ to be worth counting). */
  temperature?: number;
  /** Default 1. */
  topP?: number;
  /** Room for the analysis before the boxed verdict. Default 2048. */
  maxTokens?: number;
  /** Chunks judged at once when the whole solution is judged (no early exit). Default 4. */
  concurrency?: number;
  /** Base seed sent with every request (offset by chunk index), for backends that honour it. */
  seed?: number;
}

/** The settings a `generative:` spec's query may carry (docs/judges.md's table is generated from it). */
export const GENERATIVE_SETTINGS = z.object({
  votes: votesSetting(1, 'sampled judgments per chunk (k; one request with n = k): maj@k'),
  threshold: thresholdSetting(),
  temperature: temperatureSetting('0 with one vote (greedy), 1 with several'),
  topP: topPSetting(1),
  maxTokens: maxTokensSetting(2048, 'room for the analysis before the boxed verdict'),
});
const DEFAULTS = GENERATIVE_SETTINGS.parse({});

/** Share of Positive among the parsable verdicts of `samples`, and the counts. */
export function tallyVerdicts(samples: readonly Sample[]): {
  positive: number;
  negative: number;
  failures: number;
  rationale?: string;
} {
  let positive = 0;
  let negative = 0;
  let failures = 0;
  let firstPositive: string | undefined;
  let firstNegative: string | undefined;
  for (const s of samples) {
    const v = parseJudgeVerdict(s.text);
    if (v === 'Positive') {
      positive++;
      firstPositive ??= s.text;
    } else if (v === 'Negative') {
      negative++;
      firstNegative ??= s.text;
    } else failures++;
  }
  const rationale = positive >= negative ? (firstPositive ?? firstNegative) : firstNegative;
  return { positive, negative, failures, rationale: rationale ?? samples[0]?.text };
}

/**
 * Turn one chunk's votes into a judgment: maj@k over all k votes. Score = Positive votes / k — a
 * format failure is a vote that did not say Positive, so 1 Positive and 7 failures score 1/8, not
 * 1. A 4–4 split scores 0.5, positive at the default threshold. A chunk whose votes all failed to
 * parse is an abstention: `neutral` with score 0.5, never taken as the first error; its failures
 * are counted and reported.
 */
export function judgmentFromVotes(
  chunkIndex: number,
  samples: readonly Sample[],
  threshold: number,
): Judgment {
  const t = tallyVerdicts(samples);
  const parsed = t.positive + t.negative;
  if (parsed === 0) {
    return {
      chunkIndex,
      verdict: 'neutral',
      score: 0.5,
      rationale: t.rationale,
      formatFailures: t.failures,
      votes: samples.length,
    };
  }
  const score = t.positive / samples.length;
  return {
    chunkIndex,
    verdict: verdictOf(score, threshold),
    score,
    rationale: t.rationale,
    formatFailures: t.failures,
    votes: samples.length,
  };
}

/**
 * The StepWiser generative judge (METHODS §3): one chat request per chunk with the problem, the
 * previous chunks and the new chunk (src/prompts/judge.ts); the model writes an analysis and ends
 * with `\boxed{Positive}` or `\boxed{Negative}`. k votes are one request with n = k. With
 * `firstErrorOnly` the chunks are judged in order and judging stops at the first negative.
 */
export function createGenerativeJudge(
  model: LanguageModel,
  settings: GenerativeJudgeSettings = {},
): StepJudge {
  const threshold = settings.threshold ?? DEFAULTS.threshold;
  const name = settings.name ?? `generative:${model.provider}:${model.modelId}`;

  async function judgeChunk(
    problem: Problem,
    chunks: readonly string[],
    i: number,
    votes: number,
    options: JudgeOptions,
    cost: JudgeCost,
  ): Promise<Judgment> {
    throwIfAborted(options.signal);
    const messages = renderJudgeMessages({
      problem: problem.question,
      history: chunks.slice(0, i),
      chunk: chunks[i],
      segmentation: options.segmentation,
    });
    const baseSeed = options.seed ?? settings.seed;
    const result = await model.generate(
      {
        messages,
        n: votes,
        temperature: settings.temperature ?? (votes > 1 ? 1 : 0),
        topP: settings.topP ?? DEFAULTS.topP,
        maxTokens: settings.maxTokens ?? DEFAULTS.maxTokens,
        seed: baseSeed === undefined ? undefined : baseSeed + i,
      },
      { signal: options.signal },
    );
    cost.record(result.usage, result.samples.length, result.cached, result);
    return judgmentFromVotes(i, result.samples, threshold);
  }

  return defineJudge(model, { name, scalar: false, threshold }, (problem, chunks, options, cost) => {
    const votes = Math.max(1, Math.floor(options.votes ?? settings.votes ?? DEFAULTS.votes));
    return judgeEach(
      chunksToJudge(chunks.length, options),
      options,
      (i) => judgeChunk(problem, chunks, i, votes, options, cost),
      Math.max(1, settings.concurrency ?? 4),
    );
  });
}

/** `generative:<model spec>[?k=v]`. */
export const GENERATIVE_KIND = defineJudgeKind({
  kind: 'generative',
  help: 'StepWiser generative judge: analysis then \\boxed{Positive|Negative} per chunk; score = share of Positive',
  settings: GENERATIVE_SETTINGS.extend(JUDGE_MODEL_SETTINGS.shape),
  create: (model, settings, c) => createGenerativeJudge(model, { ...settings, name: c.name, seed: c.seed }),
});
