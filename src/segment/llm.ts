import type { LanguageModel } from '../core/model.js';
import { alignTaggedRewrite, splitParagraphs, type WhitespaceRule } from '../core/segment.js';
import type { Chunk } from '../core/types.js';
import { renderSegmenterMessages } from '../prompts/segment.js';

/** Settings of the LLM segmenter. */
export interface LlmSegmenterOptions {
  /** Replies asked for before falling back to paragraphs (default 3). */
  attempts?: number;
  /** Temperature of the first request (default 0: the model's best copy). */
  temperature?: number;
  /** Temperature of retries (default 0.7: a retry must be able to come out differently). */
  retryTemperature?: number;
  /** Token budget of one reply (default: about twice the text's tokens, plus room for tags). */
  maxTokens?: number;
  /** How whitespace between chunks is compared (default `between-chunks`; see {@link alignTaggedRewrite}). */
  whitespace?: WhitespaceRule;
  /** Base seed; attempt a is sent with seed + a (default 0). */
  seed?: number;
  signal?: AbortSignal;
  noCache?: boolean;
}

/** One solution segmented by the LLM (or by the paragraph fallback). */
export interface LlmSegmentation {
  /** Chunks of the original text: `text === original.slice(span.start, span.end)`, in order. */
  chunks: Chunk[];
  /** `llm` when a reply was accepted, `paragraph` when every reply was rejected. */
  method: 'llm' | 'paragraph';
  /** Replies asked for (requests sent). */
  attempts: number;
  /** Why each rejected reply was rejected, in order. */
  rejected: string[];
  promptTokens: number;
  completionTokens: number;
}

export const DEFAULT_SEGMENTER_ATTEMPTS = 3;

/**
 * Segment an existing solution with an LLM (METHODS §1): the model rewrites it with `<chunk>`
 * tags; a reply is accepted only when its chunks give back the original (see
 * {@link alignTaggedRewrite} for the whitespace rule); otherwise the model is asked again, up to
 * `attempts` replies, and then the text is split on blank lines instead (`method: 'paragraph'`).
 */
export async function segmentWithLlm(
  model: LanguageModel,
  text: string,
  options: LlmSegmenterOptions = {},
): Promise<LlmSegmentation> {
  const attempts = Math.max(1, Math.floor(options.attempts ?? DEFAULT_SEGMENTER_ATTEMPTS));
  const out: LlmSegmentation = {
    chunks: [],
    method: 'paragraph',
    attempts: 0,
    rejected: [],
    promptTokens: 0,
    completionTokens: 0,
  };
  if (text.trim() === '') return out;
  // A tagged copy is the text plus two short tags per chunk; ~4 characters per token.
  const maxTokens = options.maxTokens ?? Math.ceil(text.length / 2) + 256;
  const seed = options.seed ?? 0;
  for (let a = 0; a < attempts; a++) {
    const result = await model.generate(
      {
        messages: renderSegmenterMessages(text),
        n: 1,
        temperature: a === 0 ? (options.temperature ?? 0) : (options.retryTemperature ?? 0.7),
        maxTokens,
        seed: seed + a,
      },
      { signal: options.signal, noCache: options.noCache },
    );
    out.attempts++;
    out.promptTokens += result.usage.promptTokens;
    out.completionTokens += result.usage.completionTokens;
    const reply = result.samples[0];
    if (!reply) {
      out.rejected.push('no reply');
      continue;
    }
    if (reply.finishReason === 'length') {
      out.rejected.push(`reply cut at max tokens (${maxTokens})`);
      continue;
    }
    const aligned = alignTaggedRewrite(text, reply.text, options.whitespace);
    if (aligned.problem !== undefined) {
      out.rejected.push(aligned.problem);
      continue;
    }
    out.chunks = aligned.chunks;
    out.method = 'llm';
    return out;
  }
  out.chunks = splitParagraphs(text);
  return out;
}
