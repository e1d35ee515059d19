import type { Policy, PromptForm } from '../models/policy.js';
import type { LanguageModel } from '../models/types.js';
import { renderCodePolicyMessages, renderCodePolicyPrompt } from '../prompts/code.js';

/**
 * A policy that writes code block by block (src/prompts/code.ts): `question` is the problem text
 * ({@link renderCodeProblem}), `prefix` the code so far ({@link codePrefixFromSteps}).
 * `raw` sends the completion template; `chat` ends the messages with the open code fence and the
 * prefix as an assistant message to continue.
 */
export function createCodePolicy(model: LanguageModel, options: { form?: PromptForm } = {}): Policy {
  const form = options.form ?? 'raw';
  return {
    model,
    continue(question, prefix, o = {}) {
      const { signal, noCache, n, maxTokens, temperature, topP, stop, seed } = o;
      const body =
        form === 'raw'
          ? { prompt: renderCodePolicyPrompt(question, prefix) }
          : { messages: renderCodePolicyMessages(question, prefix) };
      return model.generate({ ...body, n, maxTokens, temperature, topP, stop, seed }, { signal, noCache });
    },
  };
}
