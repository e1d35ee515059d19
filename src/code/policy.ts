import { createPolicy, type Policy, type PromptForm } from '../models/policy.js';
import type { LanguageModel } from '../models/types.js';
import { CODE_TEMPLATES } from './domain.js';

/**
 * A policy that writes code block by block (src/prompts/code.ts): `question` is the problem text
 * ({@link renderCodeProblem}), `prefix` the code so far ({@link codePrefixFromSteps}).
 * `raw` sends the completion template; `chat` ends the messages with the open code fence and the
 * prefix as an assistant message to continue. The request itself is {@link createPolicy}'s.
 */
export function createCodePolicy(model: LanguageModel, options: { form?: PromptForm } = {}): Policy {
  return createPolicy(model, { form: options.form, templates: CODE_TEMPLATES });
}
