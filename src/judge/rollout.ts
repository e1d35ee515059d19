import { StepwiseError } from '../core/errors.js';
import type { Judgment } from '../core/types.js';
import {
  type AnswerChecker,
  createPrefixMemo,
  estimatePrefixValue,
  type PrefixMemo,
  type RolloutOptions,
} from '../label/estimate.js';
import {
  DEFAULT_SIGNAL_PARAMS,
  isPositiveLabel,
  type LabelSignal,
  type SignalParams,
  signalLabels,
} from '../label/signals.js';
import { createPolicy, type PromptForm } from '../models/policy.js';
import type { LanguageModel } from '../models/types.js';
import { checkSolution } from '../verify/check.js';
import { chunksToJudge, defineJudge, judgeEach, throwIfAborted } from './common.js';
import type { StepJudge } from './types.js';

/** Settings of the rollout judge. */
export interface RolloutJudgeSettings {
  name?: string;
  /** Rollouts per prefix, M. Default 16 (StepWiser). */
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

/** Signals whose label of chunk i also needs Q̂(i − 1) (so Q̂ of the bare problem for chunk 0). */
const NEEDS_PREVIOUS: readonly LabelSignal[] = ['rel-ratio', 'rel-effective'];

/** The default checker: `checkSolution` of src/verify (math answer equivalence; code where supported). */
const defaultChecker: AnswerChecker = (problem, text) => checkSolution(problem, text);

/**
 * The rollout judge (METHODS §3): the Monte Carlo value Q̂(i) of the prefix ending after chunk i —
 * the share of M policy continuations from it that reach the gold answer — is chunk i's score;
 * the verdict follows a label signal of src/label (default Abs-Q: positive iff Q̂(i) > 0).
 * Expensive (M rollouts per chunk, one request with n = M each) but needs no trained judge.
 * Needs the problem's gold answer. The rollouts are spent on judging, so they are reported as the
 * judge's cost (calls, samples and tokens of the policy model that rolls out).
 * With `firstErrorOnly` prefixes are estimated in order and estimation stops at the first negative.
 */
export function createRolloutJudge(
  policyModel: LanguageModel,
  settings: RolloutJudgeSettings = {},
): StepJudge {
  const name = settings.name ?? `rollout:${policyModel.provider}:${policyModel.modelId}`;
  const signal = settings.signal ?? 'abs-q';
  const params = { ...DEFAULT_SIGNAL_PARAMS, ...settings.params };
  // Rollouts continue the prefix in the segmentation the chunks were written in (prompt and prefix form).
  const policies = {
    paragraph: createPolicy(policyModel, { form: settings.form }),
    tags: createPolicy(policyModel, { form: settings.form, segmentation: 'tags' }),
  };
  const checker = settings.checker ?? defaultChecker;
  const memo: PrefixMemo = createPrefixMemo();
  // Abs-Q's threshold in score terms: Q̂ is a multiple of 1/M, so any value in (0, 1/M] separates 0 from > 0.
  const rollouts = settings.rollouts ?? 16;
  const threshold =
    signal === 'abs-q' || signal === 'ms-hard' || signal === 'sorm'
      ? 1 / (2 * rollouts)
      : params.softThreshold;

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
      const estimate = async (prefixLength: number): Promise<number> => {
        const known = q.get(prefixLength);
        if (known !== undefined) return known;
        throwIfAborted(options.signal);
        const policy = policies[options.segmentation ?? 'paragraph'];
        const e = await estimatePrefixValue(policy, checker, problem, chunks, prefixLength, ro);
        // The rollouts are spent on judging: they count as the judge's cost.
        cost.addAsJudge(e.cost);
        q.set(prefixLength, e.q);
        return e.q;
      };
      const judgeChunk = async (i: number): Promise<Judgment> => {
        const needsPrev = NEEDS_PREVIOUS.includes(signal);
        const cur = await estimate(i + 1);
        const prev = needsPrev ? await estimate(i) : cur;
        // Chunk labels depend only on Q̂(i) and Q̂(i−1): label a two-value vector. SORM's backward
        // propagation needs later chunks, so SORM is judged as Math-Shepherd hard labels per chunk.
        const label = signal === 'sorm' ? cur > 0 : signalLabels(signal, [prev, cur], params)[0];
        return {
          chunkIndex: i,
          verdict: isPositiveLabel(label, params.softThreshold) ? 'positive' : 'negative',
          score: cur,
          votes: rollouts,
        };
      };
      // Without early exit every prefix is estimated at once.
      return judgeEach(chunksToJudge(chunks.length, options), options, judgeChunk, Number.POSITIVE_INFINITY);
    },
  );
}
