import type { ChatMessage } from '../core/model.js';

/**
 * Code policy prompts: the policy writes a Python solution one logical block at a time (the
 * function header with its docstring, then one top-level statement of the body per block, a
 * loop or an `if` with its whole body), blocks separated by blank lines, all inside one
 * ```python fence. A prefix of accepted blocks is continued like a math solution prefix; a
 * block ends at a blank line and the solution ends at the closing fence.
 */

export const CODE_POLICY_INSTRUCTION =
  'Write a Python solution to the problem. Write it one logical block at a time: first the function header with its docstring, then one top-level statement of the function body per block (a loop or an if keeps its whole body). Separate blocks with a blank line, put the whole solution in one ```python code fence, and close the fence when the code is complete.';

const PROBLEM_MARK = 'Problem:\n';
const SOLUTION_MARK = '\n\nSolution:\n';
const FENCE_OPEN = '```python\n';

/** Where a block ends (blank line) and where the code ends (closing fence). */
export const CODE_STEP_STOP = ['\n\n', '```'];
/** Where a whole solution ends. */
export const CODE_SOLUTION_STOP = ['\n```'];

/**
 * The problem statement a code policy (and a judge) sees. MBPP-style problems list their tests,
 * as the MBPP paper's prompt does; HumanEval problems are the signature and docstring.
 */
export function renderCodeProblem(problem: {
  question: string;
  source?: string;
  meta?: Record<string, unknown>;
}): string {
  const tests = problem.meta?.test_list;
  if (Array.isArray(tests) && tests.every((t) => typeof t === 'string') && tests.length > 0)
    return `${problem.question}\nYour code should pass these tests:\n${tests.join('\n')}`;
  if (problem.source === 'humaneval')
    return `Complete this Python function:\n${FENCE_OPEN}${problem.question.trimEnd()}\n\`\`\``;
  return problem.question;
}

/** The user turn for a code problem. */
export function codePolicyUserMessage(problemText: string): string {
  return `${CODE_POLICY_INSTRUCTION}\n\n${PROBLEM_MARK}${problemText}`;
}

/** Raw-completion form: instruction, problem, then the open fence and the code prefix to continue. */
export function renderCodePolicyPrompt(problemText: string, prefix = ''): string {
  return `${codePolicyUserMessage(problemText)}${SOLUTION_MARK}${FENCE_OPEN}${prefix}`;
}

/** Chat form: the open fence and the prefix are a final assistant message the backend continues. */
export function renderCodePolicyMessages(problemText: string, prefix = ''): ChatMessage[] {
  return [
    { role: 'user', content: codePolicyUserMessage(problemText) },
    { role: 'assistant', content: `${FENCE_OPEN}${prefix}` },
  ];
}

/** Recover problem text and code prefix from either form; null when the request is not a code policy prompt. */
export function parseCodePolicyPrompt(
  input: string | ChatMessage[],
): { question: string; prefix: string } | null {
  const head = `${CODE_POLICY_INSTRUCTION}\n\n${PROBLEM_MARK}`;
  if (typeof input === 'string') {
    if (!input.startsWith(head)) return null;
    const at = input.indexOf(`${SOLUTION_MARK}${FENCE_OPEN}`, head.length);
    if (at < 0) return null;
    return {
      question: input.slice(head.length, at),
      prefix: input.slice(at + SOLUTION_MARK.length + FENCE_OPEN.length),
    };
  }
  const user = input.find((m) => m.role === 'user');
  if (!user?.content.startsWith(head)) return null;
  const last = input[input.length - 1];
  const assistant = last.role === 'assistant' ? last.content : '';
  return {
    question: user.content.slice(head.length),
    prefix: assistant.startsWith(FENCE_OPEN) ? assistant.slice(FENCE_OPEN.length) : assistant,
  };
}

/** A code prefix from accepted blocks: blocks separated by blank lines, ending with one so the next block starts fresh. */
export function codePrefixFromSteps(steps: readonly string[]): string {
  return steps.length === 0 ? '' : `${steps.join('\n\n')}\n\n`;
}
