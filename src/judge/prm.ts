import { z } from 'zod';
import { StepwiseError, UnsupportedCapabilityError } from '../core/errors.js';
import type { LanguageModel } from '../core/model.js';
import type { Judgment } from '../core/types.js';
import { renderQwenPrmInput } from '../prompts/prm.js';
import { chunksToJudge, DEFAULT_THRESHOLD, defineJudge, throwIfAborted, verdictOf } from './common.js';
import { JUDGE_MODEL_SETTINGS, thresholdSetting } from './settings.js';
import { defineJudgeKind, type StepJudge } from './types.js';

/** Settings of the discriminative `/pooling` PRM. */
export interface PoolingPrmSettings {
  name?: string;
  /** A chunk is negative when its reward is below this. Default 0.5. */
  threshold?: number;
}

/**
 * Step rewards from a `/pooling` response: one `[p_neg, p_pos]` row per step, reward = p_pos.
 * Throws a {@link StepwiseError} when the row count differs from the step count (the server's
 * model or chat template does not put one `<extra_0>` reward at every step) or a row is not a pair.
 */
export function rewardsFromPoolingRows(rows: readonly number[][], steps: number, model: string): number[] {
  if (rows.length !== steps) {
    throw new StepwiseError(
      `PRM ${model} returned ${rows.length} reward rows for ${steps} steps: the /pooling model must give one ` +
        '[p_neg, p_pos] row per <extra_0> step separator (serve a Qwen2.5-Math-PRM-style model with vLLM --task reward)',
    );
  }
  return rows.map((row, i) => {
    if (
      !Array.isArray(row) ||
      row.length !== 2 ||
      !row.every((x) => typeof x === 'number' && Number.isFinite(x))
    ) {
      throw new StepwiseError(
        `PRM ${model} returned row ${i} = ${JSON.stringify(row)}; expected two class probabilities [p_neg, p_pos]`,
      );
    }
    return row[1];
  });
}

/**
 * A discriminative PRM served by vLLM `/pooling` (INTERFACES.md): one forward pass over the
 * Qwen2.5-Math-PRM input (system prompt, problem, steps each followed by `<extra_0>`) gives one
 * `[p_neg, p_pos]` row per step; the step reward p_pos is the chunk's score. Early exit saves no
 * compute here (one pass scores every step); `firstErrorOnly` only trims the judgments.
 */
export function createPoolingPrmJudge(model: LanguageModel, settings: PoolingPrmSettings = {}): StepJudge {
  const threshold = settings.threshold ?? DEFAULT_THRESHOLD;
  const name = settings.name ?? `prm:${model.provider}:${model.modelId}`;
  return defineJudge(model, { name, scalar: true, threshold }, async (problem, chunks, options, cost) => {
    const indices = chunksToJudge(chunks.length, options);
    if (indices.length === 0) return [];
    if (!model.pool || !model.capabilities.pooling) {
      throw new UnsupportedCapabilityError(
        { provider: model.provider, model: model.modelId, capability: 'pooling' },
        `model ${model.provider}:${model.modelId} has no /pooling endpoint: a prm: judge needs a vLLM server ` +
          'running a process reward model (e.g. `vllm serve Qwen/Qwen2.5-Math-PRM-7B --task reward`)',
      );
    }
    throwIfAborted(options.signal);
    const out = await model.pool(renderQwenPrmInput(problem.question, chunks), { signal: options.signal });
    cost.record(out.usage, 1);
    const rewards = rewardsFromPoolingRows(out.data, chunks.length, name);
    return indices.map(
      (i): Judgment => ({
        chunkIndex: i,
        verdict: verdictOf(rewards[i], threshold),
        score: rewards[i],
        votes: 1,
      }),
    );
  });
}

/** `prm:<model spec>[?k=v]`. */
export const PRM_KIND = defineJudgeKind({
  kind: 'prm',
  help: 'discriminative PRM over vLLM /pooling (Qwen2.5-Math-PRM input); score = p_pos per step',
  settings: z.object({ threshold: thresholdSetting() }).extend(JUDGE_MODEL_SETTINGS.shape),
  create: (model, s, c) => createPoolingPrmJudge(model, { name: c.name, threshold: s.threshold }),
});
