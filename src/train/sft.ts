import { UsageError } from '../core/errors.js';
import { createRng, shuffled } from '../core/rng.js';
import { validateSelfSegmentation } from '../core/segment.js';
import type { ChatMessage } from '../models/types.js';
import { POLICY_INSTRUCTION } from '../prompts/policy.js';
import { renderGlobalRefineMessages, renderLocalRefineMessages } from '../prompts/refine.js';

/** One supervised pair: chat messages in, the target completion out. */
export interface SftPair {
  id: string;
  prompt: ChatMessage[];
  completion: string;
}

/** Instruction for self-segmentation SFT: the policy learns to wrap each chunk in `<chunk>` tags. */
export const SELF_SEGMENT_INSTRUCTION =
  `${POLICY_INSTRUCTION} Wrap each chunk of your reasoning in <chunk> and </chunk>: one clear purpose per chunk ` +
  '(set up an equation, one self-contained calculation, a conclusion); start a new chunk when the focus of the reasoning changes.';

/**
 * Self-segmentation pairs (METHODS §6): (problem → solution with `<chunk>` tags), kept only when
 * the tags strip back to the original text exactly.
 */
export function buildSelfSegmentationPairs(
  rows: ReadonlyArray<{ id: string; problem: string; text: string; tagged: string }>,
): { pairs: SftPair[]; rejected: Array<{ id: string; reason: string }> } {
  const pairs: SftPair[] = [];
  const rejected: Array<{ id: string; reason: string }> = [];
  for (const r of rows) {
    const check = validateSelfSegmentation(r.text, r.tagged);
    if (!check.accepted) {
      rejected.push({ id: r.id, reason: check.reason ?? 'rejected' });
      continue;
    }
    pairs.push({
      id: r.id,
      prompt: [{ role: 'user', content: `${SELF_SEGMENT_INSTRUCTION}\n\nProblem: ${r.problem}` }],
      completion: r.tagged,
    });
  }
  return { pairs, rejected };
}

/** A problem's sampled solutions, as `stepwise sample` writes them. */
export interface SampledProblem {
  id: string;
  question: string;
  samples: Array<{ text: string; correct: boolean }>;
}

/**
 * GLoRe global refinement pairs: (question, an incorrect solution) → a correct solution of the same
 * question. Each incorrect draft is used once, paired with a correct one chosen by a seeded shuffle.
 */
export function buildGlobalRefinePairs(problems: readonly SampledProblem[], seed = 0): SftPair[] {
  const rng = createRng(seed);
  const pairs: SftPair[] = [];
  for (const p of problems) {
    const right = p.samples.filter((s) => s.correct);
    const wrong = p.samples.map((s, k) => ({ s, k })).filter(({ s }) => !s.correct);
    if (right.length === 0 || wrong.length === 0) continue;
    const targets = shuffled(right, rng);
    wrong.forEach(({ s, k }, j) => {
      pairs.push({
        id: `${p.id}#${k}`,
        prompt: renderGlobalRefineMessages(p.question, s.text),
        completion: targets[j % targets.length].text,
      });
    });
  }
  return pairs;
}

/** An incorrect solution with its first bad chunk and a correct continuation of the prefix before it. */
export interface LocalRefineSource {
  id: string;
  question: string;
  chunks: string[];
  firstBad: number;
  /** A continuation from `chunks[0..firstBad)` that reaches the right answer. */
  correctContinuation: string;
}

/**
 * GLoRe local refinement pairs: (question, draft with `[BAD]` before the first bad chunk, the good
 * prefix as the assistant's start) → a correct continuation from that prefix.
 */
export function buildLocalRefinePairs(sources: readonly LocalRefineSource[]): SftPair[] {
  return sources.map((s) => {
    if (s.firstBad < 0 || s.firstBad >= s.chunks.length) {
      throw new UsageError(
        `${s.id}: first bad chunk ${s.firstBad} is outside the solution's ${s.chunks.length} chunks`,
      );
    }
    return {
      id: s.id,
      prompt: renderLocalRefineMessages(s.question, s.chunks, s.firstBad),
      completion: s.correctContinuation,
    };
  });
}
