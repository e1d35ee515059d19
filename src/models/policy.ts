import { prefixFromChunks, renderPolicyMessages, renderPolicyPrompt } from '../prompts/policy.js';
import type { CallOptions, GenerateResult, LanguageModel } from './types.js';

/** Sampling settings for continuing a solution. */
export interface ContinueOptions extends CallOptions {
  n?: number;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
}

/**
 * A policy: a model plus the prompt template that turns (question, solution prefix) into a
 * request. Rollouts, sampling and search all continue prefixes through this one door.
 */
export interface Policy {
  readonly model: LanguageModel;
  /** Continue a solution of `question` after `prefix` (use {@link prefixFromChunks} to build it). */
  continue(question: string, prefix: string, options?: ContinueOptions): Promise<GenerateResult>;
}

export type PromptForm = 'raw' | 'chat';

/**
 * Wrap a model as a policy. `raw` (the default where the backend continues raw text) sends the
 * completion template; `chat` sends messages ending in the prefix as an assistant message to
 * continue (hosted chat-only APIs).
 */
export function createPolicy(model: LanguageModel, options: { form?: PromptForm } = {}): Policy {
  const form = options.form ?? 'raw';
  return {
    model,
    continue(question, prefix, o = {}) {
      const { signal, noCache, n, maxTokens, temperature, topP, stop, seed } = o;
      const body =
        form === 'raw'
          ? { prompt: renderPolicyPrompt(question, prefix) }
          : { messages: renderPolicyMessages(question, prefix) };
      return model.generate({ ...body, n, maxTokens, temperature, topP, stop, seed }, { signal, noCache });
    },
  };
}

export { prefixFromChunks };
