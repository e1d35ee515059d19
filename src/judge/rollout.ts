import { z } from 'zod';
import { StepwiseError } from '../core/errors.js';
import type { LanguageModel } from '../core/model.js';
import { setting } from '../core/settings-schema.js';
import type { Judgment } from '../core/types.js';
import { DEFAULT_LABEL_CONFIG } from '../label/config.js';
import {
  type AnswerChecker,
  createPrefixMemo,
  estimatePrefixValue,
  type PrefixMemo,
  type RolloutOptions,
} from '../label/estimate.js';
import {
  DEFAULT_SIGNAL_PARAMS,
  effectiveReward,
  isPositiveLabel,
  LABEL_SIGNALS,
  type LabelSignal,
  PAPER_ROLLOUTS,
  relRatioLabel,
  type SignalParams,
  signalLabels,
} from '../label/signals.js';
import { createPolicy, type PromptForm, prefixFromChunks } from '../models/policy.js';
import { checkSolution } from '../verify/check.js';
import { chunksToJudge, defineJudge, judgeEach, throwIfAborted } from './common.js';
import { JUDGE_MODEL_SETTINGS } from './settings.js';
import { defineJudgeKind, type StepJudge } from './types.js';

/** Settings of the rollout judge. */
export interface RolloutJudgeSettings {
  name?: string;
  /** Rollouts per prefix, M. Default: the signal's paper (16 StepWiser; 8 Math-Shepherd, SORM). */
  rollouts?: number;
  /** Which label rule turns Q̂ into a verdict. Default `abs-q` (positive iff Q̂(i) > 0). */
  signal?: LabelSignal;
  params?: Partial<SignalParams>;
  /** Rollout sampling (defaults of src/label: T = 1, 1024 tokens). */
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  seed?: number;
  /** How the policy is prompted: raw completion (default) or chat. */
  form?: PromptForm;
  /** Checks a full solution text against the problem's gold answer. Default: src/verify `checkSolution`. */
  checker?: AnswerChecker;
}

/**
 * The settings a `rollout:` spec's query may carry: the signal and its parameters as `stepwise
 * label` takes them (src/label/settings.ts), and the rollouts' sampling.
 */
export const ROLLOUT_SETTINGS = z.object({
  rollouts: setting(z.number().int().min(1).optional(), {
    help: "M, rollouts per prefix (the signal's paper)",
    arg: 'M',
    defaultText: '16 (abs-q, rel-ratio, rel-effective), 8 (ms-hard, ms-soft, sorm)',
  }),
  signal: setting(z.enum(LABEL_SIGNALS).default('abs-q'), {
    help: 'the label rule that turns Q̂ into a verdict',
    arg: 'signal',
  }),
  gamma: setting(z.number().min(0).default(DEFAULT_SIGNAL_PARAMS.gamma), {
    help: 'rel-ratio: positive iff Q̂(i)/Q̂(i−1) > γ',
    arg: 'g',
  }),
  alpha: setting(z.number().min(0).default(DEFAULT_SIGNAL_PARAMS.alpha), {
    help: 'rel-effective: weight α of the best-of-n advantage',
    arg: 'a',
  }),
  softThreshold: setting(z.number().min(0).max(1).default(DEFAULT_SIGNAL_PARAMS.softThreshold), {
    help: 'ms-soft: Q̂ at or above which a chunk is positive',
    arg: 't',
  }),
  temperature: setting(z.number().min(0).default(DEFAULT_LABEL_CONFIG.temperature), {
    help: 'rollout temperature',
    arg: 't',
  }),
  topP: setting(z.number().min(0).max(1).optional(), {
    help: 'rollout nucleus sampling (top-p)',
    arg: 'p',
    defaultText: "the backend's",
  }),
  rolloutTokens: setting(z.number().int().min(1).default(DEFAULT_LABEL_CONFIG.maxTokens), {
    help: 'token budget of one rollout',
    arg: 'n',
  }),
});

/** Signals whose label of chunk i also needs Q̂(i − 1) (so Q̂ of the bare problem for chunk 0). */
const NEEDS_PREVIOUS: readonly LabelSignal[] = ['rel-ratio', 'rel-effective'];

/** The default checker: `checkSolution` of src/verify (math answer equivalence; code where supported). */
const defaultChecker: AnswerChecker = (problem, text) => checkSolution(problem, text);

/**
 * The score threshold that separates a signal's positives from its negatives, on the scores
 * {@link signalScore} gives: Abs-Q / Math-Shepherd hard / SORM 1/(2M) (Q̂ is a multiple of 1/M,
 * so it separates 0 from > 0); Math-Shepherd soft its soft threshold; Rel-Ratio γ (the score is
 * the ratio); Rel-Effective α/(1 + 2α) (the score maps Q̂ + α·A_μ ∈ [−α, 1 + α] onto [0, 1]).
 */
export function signalThreshold(signal: LabelSignal, rollouts: number, params: SignalParams): number {
  switch (signal) {
    case 'abs-q':
    case 'ms-hard':
    case 'sorm':
      return 1 / (2 * rollouts);
    case 'ms-soft':
      return params.softThreshold;
    case 'rel-ratio':
      return params.gamma;
    case 'rel-effective':
      return params.alpha / (1 + 2 * params.alpha);
  }
}

/**
 * Chunk i's score in [0, 1] under a signal, from Q̂(i − 1) and Q̂(i) (and for SORM the best value
 * of any later prefix): the quantity the signal thresholds, so ranking and re-thresholding follow
 * the signal rather than Q̂ alone. Rel-Ratio: min(1, Q̂(i)/Q̂(i−1)) (1 when Q̂(i−1) = 0 < Q̂(i); the
 * 0/0 case by its rule). Rel-Effective: (Q̂(i) + α·A_μ(i) + α)/(1 + 2α). SORM: the largest Q̂ of
 * this or any later prefix (a later correct rollout makes every earlier chunk positive).
 */
export function signalScore(
  signal: LabelSignal,
  prev: number,
  cur: number,
  params: SignalParams,
  laterBest = 0,
): number {
  switch (signal) {
    case 'abs-q':
    case 'ms-hard':
    case 'ms-soft':
      return cur;
    case 'sorm':
      return Math.max(cur, laterBest);
    case 'rel-ratio':
      if (prev === 0) return relRatioLabel(prev, cur, params.gamma, params.zeroOverZero) ? 1 : 0;
      return Math.min(1, cur / prev);
    case 'rel-effective': {
      const a = params.alpha;
      return Math.min(1, Math.max(0, (effectiveReward(prev, cur, a, params.bestOfN) + a) / (1 + 2 * a)));
    }
  }
}

/**
 * Keep a score on the side of the threshold its verdict is on: the verdict is decided exactly
 * (ties such as a ratio equal to γ are negative), the score only in floating point.
 */
function scoreOnItsSide(score: number, positive: boolean, threshold: number): number {
  if (positive) return Math.max(score, threshold);
  return score < threshold ? score : Math.max(0, threshold - 1e-9);
}

/** A stated final answer: what makes a solution finished rather than a prefix. */
const FINAL_ANSWER_MARK = /\\boxed|\\fbox|^\s*####\s|final answer is/im;

/**
 * The rollout judge (METHODS §3): from the Monte Carlo values Q̂ of prefixes — the share of M
 * policy continuations from a prefix that reach the gold answer — chunk i gets the verdict of
 * the label signal it is given (default Abs-Q: positive iff Q̂(i) > 0) and a score that signal
 * thresholds ({@link signalScore}): Q̂(i) for Abs-Q and Math-Shepherd, the ratio for Rel-Ratio,
 * the effective reward for Rel-Effective; SORM propagates a later positive backward, so a chunk
 * with Q̂(i) = 0 has the later prefixes estimated until one is positive.
 * Expensive (M rollouts per chunk, one request with n = M each) but needs no trained judge.
 * Needs the problem's gold answer. The rollouts are spent on judging, so they are reported as the
 * judge's cost (calls, samples and tokens of the policy model that rolls out). M defaults to the
 * signal's paper (16 StepWiser; 8 Math-Shepherd and SORM).
 * With `firstErrorOnly` prefixes are estimated in order and estimation stops at the first negative.
 */
export function createRolloutJudge(
  policyModel: LanguageModel,
  settings: RolloutJudgeSettings = {},
): StepJudge {
  const name = settings.name ?? `rollout:${policyModel.provider}:${policyModel.modelId}`;
  const signal = settings.signal ?? 'abs-q';
  const params: SignalParams = { ...DEFAULT_SIGNAL_PARAMS };
  // Options left undefined (not given in the spec) keep the defaults.
  for (const [k, v] of Object.entries(settings.params ?? {}))
    if (v !== undefined) (params as unknown as Record<string, unknown>)[k] = v;
  // Rollouts continue the prefix in the segmentation the chunks were written in (prompt and prefix form).
  const policies = {
    paragraph: createPolicy(policyModel, { form: settings.form }),
    tags: createPolicy(policyModel, { form: settings.form, segmentation: 'tags' }),
  };
  const checker = settings.checker ?? defaultChecker;
  const memo: PrefixMemo = createPrefixMemo();
  const rollouts = settings.rollouts ?? PAPER_ROLLOUTS[signal];
  const threshold = signalThreshold(signal, rollouts, params);

  return defineJudge(
    policyModel,
    { name, scalar: true, threshold },
    async (problem, chunks, options, cost) => {
      if (!problem.answer || problem.answer.trim() === '') {
        throw new StepwiseError(
          `rollout judge: problem ${problem.id} has no gold answer to check rollouts against`,
        );
      }
      const ro: RolloutOptions = {
        rollouts,
        temperature: settings.temperature,
        topP: settings.topP,
        maxTokens: settings.maxTokens,
        seed: options.seed ?? settings.seed,
        memo,
        signal: options.signal,
      };
      const q = new Map<number, number>();
      // Q̂(H) of a finished solution is its exact check, as in labels (src/label/estimate.ts,
      // checkedFullSolution), not M rollouts: the solution has ended when it states its final
      // answer (a box, `####`, "the final answer is"), as a search step ends one. A prefix without
      // that (a search's partial path) is rolled out like any other.
      const exactWhole = async (): Promise<number | null> => {
        const text = prefixFromChunks(chunks);
        if (!FINAL_ANSWER_MARK.test(text)) return null;
        const r = await checker(problem, text);
        if (typeof r === 'boolean' || r.answer === undefined || r.answer === null || r.answer === '')
          return null;
        return r.correct ? 1 : 0;
      };
      const estimate = async (prefixLength: number): Promise<number> => {
        const known = q.get(prefixLength);
        if (known !== undefined) return known;
        throwIfAborted(options.signal);
        if (prefixLength === chunks.length && prefixLength > 0) {
          const exact = await exactWhole();
          if (exact !== null) {
            q.set(prefixLength, exact);
            return exact;
          }
        }
        const policy = policies[options.segmentation ?? 'paragraph'];
        const e = await estimatePrefixValue(policy, checker, problem, chunks, prefixLength, ro);
        // The rollouts are spent on judging: they count as the judge's cost.
        cost.addAsJudge(e.cost, e.simulated ? 'sim' : undefined);
        q.set(prefixLength, e.q);
        return e.q;
      };
      const judgeChunk = async (i: number): Promise<Judgment> => {
        const cur = await estimate(i + 1);
        const prev = NEEDS_PREVIOUS.includes(signal) ? await estimate(i) : cur;
        let laterBest = 0;
        let positive: boolean;
        if (signal === 'sorm') {
          // Backward propagation: a chunk is positive when its own prefix or any later one still
          // reaches the answer; later prefixes are estimated only while none has.
          for (let k = i + 2; cur === 0 && laterBest === 0 && k <= chunks.length; k++)
            laterBest = await estimate(k);
          positive = cur > 0 || laterBest > 0;
        } else {
          // The other signals' label of chunk i depends only on Q̂(i − 1) and Q̂(i).
          positive = isPositiveLabel(signalLabels(signal, [prev, cur], params)[0], params.softThreshold);
        }
        const score = signalScore(signal, prev, cur, params, laterBest);
        return {
          chunkIndex: i,
          verdict: positive ? 'positive' : 'negative',
          score: scoreOnItsSide(score, positive, threshold),
          votes: rollouts,
        };
      };
      // Without early exit every prefix is estimated at once.
      return judgeEach(chunksToJudge(chunks.length, options), options, judgeChunk, Number.POSITIVE_INFINITY);
    },
  );
}

/** `rollout:<policy model spec>[?k=v]`. */
export const ROLLOUT_KIND = defineJudgeKind({
  kind: 'rollout',
  help: 'rollout judge: the Monte Carlo value Q̂ of each prefix (policy rollouts) as the score',
  settings: ROLLOUT_SETTINGS.extend(JUDGE_MODEL_SETTINGS.shape),
  aliases: { maxTokens: 'rolloutTokens' },
  create: (model, s, c) =>
    createRolloutJudge(model, {
      ...{ name: c.name, rollouts: s.rollouts, signal: s.signal, temperature: s.temperature, topP: s.topP },
      params: { gamma: s.gamma, alpha: s.alpha, softThreshold: s.softThreshold },
      ...{ maxTokens: s.rolloutTokens, seed: c.seed, checker: c.checker },
    }),
});
