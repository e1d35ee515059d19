import { z } from 'zod';
import type { LanguageModel } from '../core/model.js';
import { writtenPrefix } from '../core/segment.js';
import type { Judgment, Problem } from '../core/types.js';
import { parseOrmVerdict, renderOrmMessages } from '../prompts/orm.js';
import { defineJudge, type JudgeCost, judgeEach, throwIfAborted, verdictOf } from './common.js';
import {
  JUDGE_MODEL_SETTINGS,
  maxTokensSetting,
  temperatureSetting,
  thresholdSetting,
  topPSetting,
  votesSetting,
} from './settings.js';
import { defineJudgeKind, type JudgeOptions, type StepJudge } from './types.js';

/** Settings of the outcome model. */
export interface OrmJudgeSettings {
  name?: string;
  /** Sampled verdicts (one request with n = k); score = share of Correct. Default 1. */
  votes?: number;
  /** A solution is judged wrong when its score is below this. Default 0.5. */
  threshold?: number;
  /** Default 0 with one vote, 1 with several. */
  temperature?: number;
  topP?: number;
  /** Default 1024. */
  maxTokens?: number;
  seed?: number;
}

/** The settings an `orm:` spec's query may carry. */
export const ORM_SETTINGS = z.object({
  votes: votesSetting(1, 'sampled verdicts (one request with n = k); score = share of Correct'),
  threshold: thresholdSetting(),
  temperature: temperatureSetting('0 with one vote (greedy), 1 with several'),
  topP: topPSetting(1),
  maxTokens: maxTokensSetting(1024, 'room for the reasoning before the boxed verdict'),
});
const DEFAULTS = ORM_SETTINGS.parse({});

/** The solution the ORM reads: blank-line steps, or under tags the chunks in `<chunk>`s. */
function solutionText(chunks: readonly string[], options: JudgeOptions): string {
  return options.segmentation === 'tags' ? writtenPrefix(chunks, 'tags') : chunks.join('\n\n');
}

/**
 * An outcome model (METHODS §3): one verdict for a whole solution (src/prompts/orm.ts: brief
 * reasoning, then `\boxed{Correct}` or `\boxed{Incorrect}`); score = share of Correct over k votes.
 *
 * An ORM does not localise errors. By default it is asked once, about the whole solution (the
 * chunks joined by blank lines, or under `segmentation: 'tags'` each in its `<chunk>`); its one judgment sits on the last chunk and is also the
 * `solutionScore`, so a negative verdict makes the last chunk the predicted first error. With
 * `only`, each requested chunk i is judged as the end of the partial solution chunks 0..i (the
 * ORM used as a value estimate during search). Unparsable replies are format failures; when all
 * fail, the judgment is neutral with score 0.5.
 */
export function createOrmJudge(model: LanguageModel, settings: OrmJudgeSettings = {}): StepJudge {
  const threshold = settings.threshold ?? DEFAULTS.threshold;
  const name = settings.name ?? `orm:${model.provider}:${model.modelId}`;

  async function judgeUpTo(
    problem: Problem,
    chunks: readonly string[],
    i: number,
    options: JudgeOptions,
    cost: JudgeCost,
  ): Promise<Judgment> {
    throwIfAborted(options.signal);
    const votes = Math.max(1, Math.floor(options.votes ?? settings.votes ?? DEFAULTS.votes));
    const out = await model.generate(
      {
        messages: renderOrmMessages(problem.question, solutionText(chunks.slice(0, i + 1), options)),
        n: votes,
        temperature: settings.temperature ?? (votes > 1 ? 1 : 0),
        topP: settings.topP ?? DEFAULTS.topP,
        maxTokens: settings.maxTokens ?? DEFAULTS.maxTokens,
        seed: options.seed ?? settings.seed,
      },
      { signal: options.signal },
    );
    cost.record(out.usage, out.samples.length, out.cached, out);
    let correct = 0;
    let parsed = 0;
    let rationale: string | undefined;
    for (const s of out.samples) {
      const v = parseOrmVerdict(s.text);
      if (v === null) continue;
      parsed++;
      if (v === 'Correct') correct++;
      rationale ??= s.text;
    }
    const failures = out.samples.length - parsed;
    if (parsed === 0) {
      return {
        chunkIndex: i,
        verdict: 'neutral',
        score: 0.5,
        formatFailures: failures,
        votes: out.samples.length,
      };
    }
    // maj@k over all k votes: a format failure is a vote that did not say Correct.
    const score = correct / out.samples.length;
    return {
      chunkIndex: i,
      verdict: verdictOf(score, threshold),
      score,
      rationale,
      formatFailures: failures,
      votes: out.samples.length,
    };
  }

  return defineJudge(model, { name, scalar: false, threshold }, async (problem, chunks, options, cost) => {
    if (chunks.length === 0) return [];
    const last = chunks.length - 1;
    const indices = options.only
      ? [...new Set(options.only)]
          .filter((i) => Number.isInteger(i) && i >= 0 && i <= last)
          .sort((a, b) => a - b)
      : [last];
    const judgments = await judgeEach(indices, options, (i) => judgeUpTo(problem, chunks, i, options, cost));
    const whole = judgments.find((j) => j.chunkIndex === last);
    return {
      judgments,
      extra: { solutionScore: whole && whole.verdict !== 'neutral' ? whole.score : undefined },
    };
  });
}

/** `orm:<model spec>[?k=v]`. */
export const ORM_KIND = defineJudgeKind({
  kind: 'orm',
  help: 'outcome model: one score for the whole solution',
  settings: ORM_SETTINGS.extend(JUDGE_MODEL_SETTINGS.shape),
  create: (model, s, c) =>
    createOrmJudge(model, {
      ...{ name: c.name, votes: s.votes, threshold: s.threshold, temperature: s.temperature },
      ...{ topP: s.topP, maxTokens: s.maxTokens, seed: c.seed },
    }),
});
