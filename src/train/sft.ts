import { UsageError } from '../core/errors.js';
import type { ChatMessage } from '../core/model.js';
import { createRng, type Rng, shuffled } from '../core/rng.js';
import { type Segmentation, validateSelfSegmentation } from '../core/segment.js';
import { policyUserMessage, TAGS_POLICY_INSTRUCTION } from '../prompts/policy.js';
import {
  renderGlobalRefineMessages,
  renderLocalRefineMessages,
  type WrittenDraft,
} from '../prompts/refine.js';

/** One supervised pair: chat messages in, the target completion out. */
export interface SftPair {
  id: string;
  prompt: ChatMessage[];
  completion: string;
}

/**
 * Instruction for self-segmentation SFT: the one `--segmentation tags` sends, so a policy tuned on
 * these pairs is then asked exactly what it was trained on.
 */
export const SELF_SEGMENT_INSTRUCTION = TAGS_POLICY_INSTRUCTION;

/**
 * The original text with `<chunk>` and `</chunk>` put around each span (spans in order, not
 * overlapping): removing the tags gives back the text exactly, whitespace between chunks included.
 */
export function tagSpans(text: string, spans: ReadonlyArray<{ start: number; end: number }>): string {
  let out = '';
  let last = 0;
  for (const s of spans) {
    if (s.start < last || s.end < s.start || s.end > text.length)
      throw new UsageError(`span [${s.start}, ${s.end}) is out of order or outside the text`);
    out += `${text.slice(last, s.start)}<chunk>${text.slice(s.start, s.end)}</chunk>`;
    last = s.end;
  }
  return out + text.slice(last);
}

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
    const made = selfSegmentationPairOf(r);
    if ('pair' in made) pairs.push(made.pair);
    else rejected.push({ id: r.id, reason: made.rejected });
  }
  return { pairs, rejected };
}

/** One row's self-segmentation pair, or why its tagging was rejected. */
export function selfSegmentationPairOf(r: {
  id: string;
  problem: string;
  text: string;
  tagged: string;
}): { pair: SftPair } | { rejected: string } {
  const check = validateSelfSegmentation(r.text, r.tagged);
  if (!check.accepted) return { rejected: check.reason ?? 'rejected' };
  return {
    pair: {
      id: r.id,
      prompt: [{ role: 'user', content: policyUserMessage(r.problem, 'tags') }],
      completion: r.tagged,
    },
  };
}

/** A problem's sampled solutions, as `stepwise sample` writes them. */
export interface SampledProblem {
  id: string;
  question: string;
  /** How the policy was asked to write (`--segmentation`; absent: paragraph). */
  segmentation?: Segmentation;
  /** Under tags, `segmentation: 'paragraph'` and `written` mark a reply whose tags were malformed. */
  samples: Array<{ text: string; correct: boolean; segmentation?: Segmentation; written?: string }>;
}

/**
 * GLoRe global refinement pairs: (question, an incorrect solution) → a correct solution of the same
 * question. Each incorrect draft is used once, paired with a correct one chosen by a seeded shuffle.
 * Under tags the prompt asks for `<chunk>`s, drafts are quoted as the policy wrote them, and only
 * correct solutions with well-formed tags are targets.
 */
export function buildGlobalRefinePairs(problems: readonly SampledProblem[], seed = 0): SftPair[] {
  const rng = createRng(seed);
  return problems.flatMap((p) => globalRefinePairsOf(p, rng));
}

/**
 * One problem's global refinement pairs. `rng` is shared by the problems of a file in order (one
 * stream from the seed), so reading the file one problem at a time pairs as reading it whole.
 */
export function globalRefinePairsOf(p: SampledProblem, rng: Rng): SftPair[] {
  const segmentation = p.segmentation ?? 'paragraph';
  const right = p.samples.filter(
    (s) => s.correct && (segmentation !== 'tags' || s.segmentation !== 'paragraph'),
  );
  const wrong = p.samples.map((s, k) => ({ s, k })).filter(({ s }) => !s.correct);
  if (right.length === 0 || wrong.length === 0) return [];
  const targets = shuffled(right, rng);
  return wrong.map(({ s, k }, j) => ({
    id: `${p.id}#${k}`,
    prompt: renderGlobalRefineMessages(p.question, s.written ?? s.text, segmentation),
    completion: targets[j % targets.length].text,
  }));
}

/** An incorrect solution with its first bad chunk and a correct continuation of the prefix before it. */
export interface LocalRefineSource {
  id: string;
  question: string;
  chunks: string[];
  firstBad: number;
  /** A continuation from `chunks[0..firstBad)` that reaches the right answer. */
  correctContinuation: string;
  /** How the policy wrote (default paragraph): the prompt asks for that form. */
  segmentation?: Segmentation;
  /** The solution as the policy wrote it (its chunks are `chunks`); default: rebuilt from `chunks`. */
  written?: WrittenDraft;
}

/**
 * GLoRe local refinement pairs: (question, draft with `[BAD]` before the first bad chunk, the good
 * prefix as the assistant's start) → a correct continuation from that prefix. Under tags the good
 * prefix is the policy's own text, ending right after a `</chunk>`.
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
      prompt: renderLocalRefineMessages(s.question, s.written ?? s.chunks, s.firstBad, s.segmentation),
      completion: s.correctContinuation,
    };
  });
}
