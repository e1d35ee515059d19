import { z } from 'zod';
import type { LanguageModel, Sample } from '../core/model.js';
import { setting } from '../core/settings-schema.js';
import type { Judgment } from '../core/types.js';
import { parseCriticAnswer, renderCriticMessages } from '../prompts/critic.js';
import { chunksToJudge, defineJudge, throwIfAborted } from './common.js';
import { JUDGE_MODEL_SETTINGS, maxTokensSetting, topPSetting, votesSetting } from './settings.js';
import { defineJudgeKind, type StepJudge } from './types.js';

/** Settings of the ProcessBench critic. */
export interface CriticJudgeSettings {
  name?: string;
  /** Samples voted on (maj@k). Default 8, the ProcessBench protocol. */
  votes?: number;
  /** Default 1 (ProcessBench). */
  temperature?: number;
  /** Default 0.9 (ProcessBench). */
  topP?: number;
  /** Room for the paragraph-by-paragraph critique. Default 4096. */
  maxTokens?: number;
  seed?: number;
  /** Prompt template with `{problem}` and `{tagged_response}` slots, sent verbatim (default: our wording). */
  template?: string;
}

/** The outcome of maj@k over critic samples. */
/** The settings a `critic:` spec's query may carry (ProcessBench's protocol by default). */
export const CRITIC_SETTINGS = z.object({
  votes: votesSetting(8, 'samples voted on (maj@k; ProcessBench: 8)'),
  temperature: setting(z.number().min(0).default(1), {
    help: 'sampling temperature (ProcessBench: 1)',
    arg: 't',
  }),
  topP: topPSetting(0.9),
  maxTokens: maxTokensSetting(4096, 'room for the paragraph-by-paragraph critique'),
});
const DEFAULTS = CRITIC_SETTINGS.parse({});

export interface CriticVote {
  /** The majority index (−1 = no error); −1 as well when `abstained`. */
  firstError: number;
  /** Valid answers: integers in [−1, steps − 1]. */
  answers: number[];
  /** Samples without a valid answer (no `\boxed{int}`, or an index outside the solution). */
  failures: number;
  abstained: boolean;
}

/**
 * maj@k over critic replies: each reply's last `\boxed{int}` is its answer; answers outside
 * [−1, steps − 1] count as format failures. The most frequent answer wins; ties go to the answer
 * that appeared first in sample order (as Python's `Counter.most_common` does).
 */
export function voteCritic(samples: readonly Sample[], steps: number): CriticVote {
  const answers: number[] = [];
  let failures = 0;
  for (const s of samples) {
    const a = parseCriticAnswer(s.text);
    if (a === null || a < -1 || a >= steps) failures++;
    else answers.push(a);
  }
  if (answers.length === 0) return { firstError: -1, answers, failures, abstained: true };
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  let best = answers[0];
  for (const [a, c] of counts) if (c > counts.get(best)!) best = a;
  return { firstError: best, answers, failures, abstained: false };
}

/**
 * The ProcessBench critic (METHODS §3–4): the whole solution with paragraphs tagged
 * `<paragraph_i>` from 0 in one prompt; each sample answers the earliest wrong paragraph (or −1) in
 * `\boxed{}`; maj@k decides. One request with n = k.
 *
 * Per-chunk output: chunk i's score is the share of the k samples whose valid answer places the
 * first error after i (or nowhere; format failures count against); chunks before the voted first error are positive, that chunk negative, and
 * chunks after it `neutral` (a critic does not rule on them). `solutionScore` is the share of
 * the k samples voting −1. When no sample gives a valid answer the result is `abstained` (firstError −1,
 * counted as a miss by ProcessBench scoring).
 */
export function createCriticJudge(model: LanguageModel, settings: CriticJudgeSettings = {}): StepJudge {
  const name = settings.name ?? `critic:${model.provider}:${model.modelId}`;
  return defineJudge(model, { name, scalar: false }, async (problem, chunks, options, cost) => {
    if (chunks.length === 0) return [];
    throwIfAborted(options.signal);
    const votes = Math.max(1, Math.floor(options.votes ?? settings.votes ?? DEFAULTS.votes));
    const out = await model.generate(
      {
        messages: renderCriticMessages(problem.question, chunks, settings.template),
        n: votes,
        temperature: settings.temperature ?? DEFAULTS.temperature,
        topP: settings.topP ?? DEFAULTS.topP,
        maxTokens: settings.maxTokens ?? DEFAULTS.maxTokens,
        seed: options.seed ?? settings.seed,
      },
      { signal: options.signal },
    );
    cost.record(out.usage, out.samples.length, out.cached, out);
    const vote = voteCritic(out.samples, chunks.length);
    const fe = vote.firstError;
    const valid = vote.answers.length;
    const rationale = out.samples.find((s) => parseCriticAnswer(s.text) === fe)?.text;
    const judgments: Judgment[] = [];
    for (const i of chunksToJudge(chunks.length, options)) {
      if (options.firstErrorOnly && fe >= 0 && i > fe) break;
      // maj@k over all k samples: a format failure does not vote for "no error here".
      const fine = vote.answers.filter((a) => a === -1 || a > i).length;
      const score = valid === 0 ? 0.5 : fine / out.samples.length;
      const verdict = vote.abstained
        ? 'neutral'
        : fe === -1 || i < fe
          ? 'positive'
          : i === fe
            ? 'negative'
            : 'neutral';
      judgments.push({
        chunkIndex: i,
        verdict,
        score,
        rationale: i === fe ? rationale : undefined,
        votes: out.samples.length,
      });
    }
    // The vote, not the judgments, decides the first error (with `only` the voted chunk may be
    // left out) and the format failures (samples, not chunks).
    return {
      judgments,
      extra: {
        firstError: fe,
        formatFailures: vote.failures,
        replies: out.samples.length,
        abstained: vote.abstained || undefined,
        solutionScore:
          valid === 0 ? undefined : vote.answers.filter((a) => a === -1).length / out.samples.length,
      },
    };
  });
}

/** `critic:<model spec>[?k=v]`. */
export const CRITIC_KIND = defineJudgeKind({
  kind: 'critic',
  help: 'ProcessBench critic: whole solution, earliest wrong paragraph in \\boxed{}, maj@k',
  settings: CRITIC_SETTINGS.extend(JUDGE_MODEL_SETTINGS.shape),
  create: (model, s, c) =>
    createCriticJudge(model, {
      ...{ name: c.name, votes: s.votes, temperature: s.temperature, topP: s.topP, maxTokens: s.maxTokens },
      ...{ seed: c.seed, template: c.criticTemplate },
    }),
});
