import { UsageError } from '../core/errors.js';
import type { CallOptions, ChatMessage, GenerateResult, LanguageModel } from '../core/model.js';
import type { Segmentation } from '../core/segment.js';
import { type ChatTemplate, continueAssistantTurn } from '../prompts/chat-template.js';
import { prefixFromChunks, renderPolicyMessages, renderPolicyPrompt } from '../prompts/policy.js';

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
  /** The model's own chat template the raw prompts are rendered with (its id), when one is used. */
  readonly chatTemplate?: string;
  /** How the policy is asked to segment what it writes (default `paragraph`). */
  readonly segmentation?: Segmentation;
  /** How it is prompted (a job records it), when known. */
  readonly form?: PromptForm;
  /** Continue a solution of `question` after `prefix` (use {@link prefixFromChunks} to build it). */
  continue(question: string, prefix: string, options?: ContinueOptions): Promise<GenerateResult>;
}

export type PromptForm = 'raw' | 'chat';

/** The prompt templates a policy renders (question, prefix) with: one per {@link PromptForm}. */
export interface PolicyTemplates {
  /** Completion text ending in the prefix, for `raw`. */
  raw(question: string, prefix: string): string;
  /** Messages ending in the prefix as an assistant message to continue, for `chat`. */
  chat(question: string, prefix: string): ChatMessage[];
}

/** The solution-writing templates of src/prompts/policy.ts under a segmentation. */
function solutionTemplates(segmentation: Segmentation): PolicyTemplates {
  return {
    raw: (q, prefix) => renderPolicyPrompt(q, prefix, segmentation),
    chat: (q, prefix) => renderPolicyMessages(q, prefix, segmentation),
  };
}

/**
 * Wrap a model as a policy. `raw` (the default where the backend continues raw text) sends the
 * completion template; `chat` sends messages ending in the prefix as an assistant message to
 * continue (hosted chat-only APIs). `templates` swaps the prompt (the code policy passes its own);
 * the default is the math solution prompt, asking for blank-line steps or, with `segmentation:
 * 'tags'`, for `<chunk>`-tagged chunks. With `chatTemplate` (the model's own, `--chat-template`)
 * the raw prompt is the chat conversation rendered client-side with the generation prompt, then
 * the prefix: the model continues its own assistant turn, as in sampling.
 */
export function createPolicy(
  model: LanguageModel,
  options: {
    form?: PromptForm;
    templates?: PolicyTemplates;
    chatTemplate?: ChatTemplate;
    segmentation?: Segmentation;
  } = {},
): Policy {
  const form = options.form ?? 'raw';
  const segmentation = options.segmentation ?? 'paragraph';
  const templates = options.templates ?? solutionTemplates(segmentation);
  const chatTemplate = options.chatTemplate;
  if (chatTemplate && form !== 'raw')
    throw new UsageError(
      '--chat-template renders raw prompts client-side; with --prompt-form chat the server applies its own template (drop one of them)',
    );
  const raw = chatTemplate
    ? (question: string, prefix: string) =>
        continueAssistantTurn(chatTemplate, templates.chat(question, ''), prefix)
    : templates.raw;
  return {
    model,
    segmentation,
    form,
    ...(chatTemplate ? { chatTemplate: chatTemplate.id } : {}),
    continue(question, prefix, o = {}) {
      const { signal, noCache, n, maxTokens, temperature, topP, stop, seed } = o;
      const body =
        form === 'raw' ? { prompt: raw(question, prefix) } : { messages: templates.chat(question, prefix) };
      return model.generate({ ...body, n, maxTokens, temperature, topP, stop, seed }, { signal, noCache });
    },
  };
}

export { prefixFromChunks };
