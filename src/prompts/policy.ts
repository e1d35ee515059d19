import type { ChatMessage } from '../models/types.js';

/**
 * Policy prompt templates, in a raw-completion and a chat form. Both carry the same content so
 * a solution prefix can be continued on any backend; `parsePolicyPrompt` inverts them (the
 * simulated world uses it to recover the problem and the prefix from a request).
 */

export const POLICY_INSTRUCTION =
  'Solve the problem step by step. Separate steps with a blank line, and put the final answer in \\boxed{}.';

const PROBLEM_MARK = 'Problem: ';
const SOLUTION_MARK = '\n\nSolution:\n';

/** The user turn for a problem. */
export function policyUserMessage(question: string): string {
  return `${POLICY_INSTRUCTION}\n\n${PROBLEM_MARK}${question}`;
}

/** Raw-completion form: instruction, problem, then the solution prefix to continue. */
export function renderPolicyPrompt(question: string, prefix = ''): string {
  return `${policyUserMessage(question)}${SOLUTION_MARK}${prefix}`;
}

/** Chat form: the prefix (if any) is a final assistant message the backend continues. */
export function renderPolicyMessages(question: string, prefix = ''): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'user', content: policyUserMessage(question) }];
  if (prefix !== '') messages.push({ role: 'assistant', content: prefix });
  return messages;
}

/** Recover question and prefix from either form; null when the request is not a policy prompt. */
export function parsePolicyPrompt(
  input: string | ChatMessage[],
): { question: string; prefix: string } | null {
  if (typeof input === 'string') {
    const head = `${POLICY_INSTRUCTION}\n\n${PROBLEM_MARK}`;
    if (!input.startsWith(head)) return null;
    const at = input.indexOf(SOLUTION_MARK, head.length);
    if (at < 0) return null;
    return { question: input.slice(head.length, at), prefix: input.slice(at + SOLUTION_MARK.length) };
  }
  const user = input.find((m) => m.role === 'user');
  const head = `${POLICY_INSTRUCTION}\n\n${PROBLEM_MARK}`;
  if (!user?.content.startsWith(head)) return null;
  const last = input[input.length - 1];
  return { question: user.content.slice(head.length), prefix: last.role === 'assistant' ? last.content : '' };
}

/**
 * Join chunk texts into a prefix that a continuation can follow: chunks separated by blank
 * lines, ending with a blank line so the next chunk starts fresh. Empty list → empty prefix.
 */
export function prefixFromChunks(chunks: readonly string[]): string {
  return chunks.length === 0 ? '' : `${chunks.join('\n\n')}\n\n`;
}
