import type { ChatMessage } from '../core/model.js';
import { type Segmentation, writtenPrefix } from '../core/segment.js';
import type { PromptInput, PromptReader } from './protocol.js';

/**
 * Policy prompt templates, in a raw-completion and a chat form. Both carry the same content so
 * a solution prefix can be continued on any backend; `parsePolicyPrompt` inverts them (the
 * simulated world uses it to recover the problem and the prefix from a request).
 */

export const POLICY_INSTRUCTION =
  'Solve the problem step by step. Separate steps with a blank line, and put the final answer in \\boxed{}.';

/**
 * The self-segmentation instruction (`--segmentation tags`): the chunk rules of StepWiser
 * (METHODS §1), in our own words.
 */
export const TAGS_POLICY_INSTRUCTION =
  'Solve the problem step by step, writing your reasoning as a sequence of chunks, each wrapped in ' +
  '<chunk> and </chunk>. Give every chunk a single clear purpose, such as setting up an equation, ' +
  'carrying out one self-contained calculation, or drawing a conclusion, and open a new chunk whenever ' +
  'the focus or phase of your reasoning changes. Write nothing outside the chunks, and put the final ' +
  'answer in \\boxed{} inside the last chunk.';

/** The instruction the policy is given under a segmentation. */
export function policyInstruction(segmentation: Segmentation = 'paragraph'): string {
  return segmentation === 'tags' ? TAGS_POLICY_INSTRUCTION : POLICY_INSTRUCTION;
}

const PROBLEM_MARK = 'Problem: ';
const SOLUTION_MARK = '\n\nSolution:\n';

/** The user turn for a problem. */
export function policyUserMessage(question: string, segmentation: Segmentation = 'paragraph'): string {
  return `${policyInstruction(segmentation)}\n\n${PROBLEM_MARK}${question}`;
}

/** Raw-completion form: instruction, problem, then the solution prefix to continue. */
export function renderPolicyPrompt(
  question: string,
  prefix = '',
  segmentation: Segmentation = 'paragraph',
): string {
  return `${policyUserMessage(question, segmentation)}${SOLUTION_MARK}${prefix}`;
}

/** Chat form: the prefix (if any) is a final assistant message the backend continues. */
export function renderPolicyMessages(
  question: string,
  prefix = '',
  segmentation: Segmentation = 'paragraph',
): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'user', content: policyUserMessage(question, segmentation) }];
  if (prefix !== '') messages.push({ role: 'assistant', content: prefix });
  return messages;
}

/** Recover question, prefix and segmentation from either form; null when the request is not a policy prompt. */
export function parsePolicyPrompt(
  input: PromptInput,
): { question: string; prefix: string; segmentation: Segmentation } | null {
  const user = typeof input === 'string' ? input : input.find((m) => m.role === 'user')?.content;
  if (user === undefined) return null;
  for (const segmentation of ['paragraph', 'tags'] as const) {
    const head = `${policyInstruction(segmentation)}\n\n${PROBLEM_MARK}`;
    if (!user.startsWith(head)) continue;
    if (typeof input === 'string') {
      const at = input.indexOf(SOLUTION_MARK, head.length);
      if (at < 0) return null;
      return {
        question: input.slice(head.length, at),
        prefix: input.slice(at + SOLUTION_MARK.length),
        segmentation,
      };
    }
    const last = input[input.length - 1];
    return {
      question: user.slice(head.length),
      prefix: last.role === 'assistant' ? last.content : '',
      segmentation,
    };
  }
  return null;
}

/** The policy prompt's reader (protocol.ts): both forms, both segmentations. */
export const policyPromptReader: PromptReader<'policy'> = {
  kind: 'policy',
  family: 'policy',
  read(input) {
    const p = parsePolicyPrompt(input);
    return p && { kind: 'policy', problem: p.question, prefix: p.prefix, segmentation: p.segmentation };
  },
};

/**
 * Join chunk texts into a prefix that a continuation can follow. `paragraph`: chunks separated
 * by blank lines, ending with a blank line so the next chunk starts fresh. `tags`: each chunk in
 * `<chunk>…</chunk>`, ending right after the last `</chunk>`. Empty list → empty prefix. (Where
 * the policy's own text is known, continue that instead: it keeps what the policy wrote.)
 */
export function prefixFromChunks(
  chunks: readonly string[],
  segmentation: Segmentation = 'paragraph',
): string {
  return writtenPrefix(chunks, segmentation);
}
