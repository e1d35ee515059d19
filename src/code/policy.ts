import type { LanguageModel } from '../core/model.js';
import type { Segmentation } from '../core/segment.js';
import { createPolicy, type Policy, type PromptForm } from '../models/policy.js';
import { codeTemplates } from './domain.js';

/**
 * A policy that writes code block by block (src/prompts/code.ts): `question` is the problem text
 * ({@link renderCodeProblem}), `prefix` the code so far ({@link codePrefixFromSteps}).
 * `raw` sends the completion template; `chat` ends the messages with the open code fence and the
 * prefix as an assistant message to continue. The request itself is {@link createPolicy}'s.
 * Under `segmentation: 'tags'` the prompt asks for each block between `<chunk>` lines.
 */
export function createCodePolicy(
  model: LanguageModel,
  options: { form?: PromptForm; segmentation?: Segmentation } = {},
): Policy {
  const segmentation = options.segmentation ?? 'paragraph';
  return createPolicy(model, { form: options.form, templates: codeTemplates(segmentation), segmentation });
}
