import type { ChatMessage } from '../core/model.js';
import { CHUNK_CLOSE, CHUNK_OPEN, type Segmentation } from '../core/segment.js';

/**
 * Code policy prompts: the policy writes a Python solution one logical block at a time (the
 * function header with its docstring, then one top-level statement of the body per block, a
 * loop or an `if` with its whole body), blocks separated by blank lines, all inside one
 * ```python fence. A prefix of accepted blocks is continued like a math solution prefix; a
 * block ends at a blank line and the solution ends at the closing fence.
 *
 * Under `--segmentation tags` the policy segments its code itself: each block goes between a
 * `<chunk>` line and a `</chunk>` line (indentation kept), a step call stops at `</chunk>`, and a
 * prefix is the policy's own text up to a `</chunk>`. Removing the tag lines gives the code.
 */

export const CODE_POLICY_INSTRUCTION =
  'Write a Python solution to the problem. Write it one logical block at a time: first the function header with its docstring, then one top-level statement of the function body per block (a loop or an if keeps its whole body). Separate blocks with a blank line, put the whole solution in one ```python code fence, and close the fence when the code is complete.';

/** The code instruction under `--segmentation tags`: the same blocks, each between tag lines. */
export const CODE_TAGS_POLICY_INSTRUCTION =
  'Write a Python solution to the problem. Write it one logical block at a time: first the function header with its docstring, then one top-level statement of the function body per block (a loop or an if keeps its whole body). Put each block between a line holding only <chunk> and a line holding only </chunk>, keeping its indentation; put the whole solution in one ```python code fence, and close the fence when the code is complete.';

/** The code instruction under a segmentation. */
export function codePolicyInstruction(segmentation: Segmentation = 'paragraph'): string {
  return segmentation === 'tags' ? CODE_TAGS_POLICY_INSTRUCTION : CODE_POLICY_INSTRUCTION;
}

const PROBLEM_MARK = 'Problem:\n';
const SOLUTION_MARK = '\n\nSolution:\n';
const FENCE_OPEN = '```python\n';

/** Where a block ends (blank line) and where the code ends (closing fence). */
export const CODE_STEP_STOP = ['\n\n', '```'];
/** The same under tags: a block ends at its `</chunk>`. */
export const CODE_TAGS_STEP_STOP = [CHUNK_CLOSE, '```'];

/** The stop strings of a one-block call under a segmentation. */
export function codeStepStop(segmentation: Segmentation = 'paragraph'): string[] {
  return segmentation === 'tags' ? CODE_TAGS_STEP_STOP : CODE_STEP_STOP;
}
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
export function codePolicyUserMessage(problemText: string, segmentation: Segmentation = 'paragraph'): string {
  return `${codePolicyInstruction(segmentation)}\n\n${PROBLEM_MARK}${problemText}`;
}

/** Raw-completion form: instruction, problem, then the open fence and the code prefix to continue. */
export function renderCodePolicyPrompt(
  problemText: string,
  prefix = '',
  segmentation: Segmentation = 'paragraph',
): string {
  return `${codePolicyUserMessage(problemText, segmentation)}${SOLUTION_MARK}${FENCE_OPEN}${prefix}`;
}

/** Chat form: the open fence and the prefix are a final assistant message the backend continues. */
export function renderCodePolicyMessages(
  problemText: string,
  prefix = '',
  segmentation: Segmentation = 'paragraph',
): ChatMessage[] {
  return [
    { role: 'user', content: codePolicyUserMessage(problemText, segmentation) },
    { role: 'assistant', content: `${FENCE_OPEN}${prefix}` },
  ];
}

/** Recover problem text, code prefix and segmentation from either form; null when the request is not a code policy prompt. */
export function parseCodePolicyPrompt(
  input: string | ChatMessage[],
): { question: string; prefix: string; segmentation: Segmentation } | null {
  const user = typeof input === 'string' ? input : input.find((m) => m.role === 'user')?.content;
  if (user === undefined) return null;
  for (const segmentation of ['paragraph', 'tags'] as const) {
    const head = `${codePolicyInstruction(segmentation)}\n\n${PROBLEM_MARK}`;
    if (!user.startsWith(head)) continue;
    if (typeof input === 'string') {
      const at = input.indexOf(`${SOLUTION_MARK}${FENCE_OPEN}`, head.length);
      if (at < 0) return null;
      return {
        question: input.slice(head.length, at),
        prefix: input.slice(at + SOLUTION_MARK.length + FENCE_OPEN.length),
        segmentation,
      };
    }
    const last = input[input.length - 1];
    const assistant = last.role === 'assistant' ? last.content : '';
    return {
      question: user.slice(head.length),
      prefix: assistant.startsWith(FENCE_OPEN) ? assistant.slice(FENCE_OPEN.length) : assistant,
      segmentation,
    };
  }
  return null;
}

/**
 * A code prefix from accepted blocks. `paragraph`: blocks separated by blank lines, ending with
 * one so the next block starts fresh. `tags`: each block between a `<chunk>` line and a
 * `</chunk>` line, ending right after the last `</chunk>`.
 */
export function codePrefixFromSteps(
  steps: readonly string[],
  segmentation: Segmentation = 'paragraph',
): string {
  if (steps.length === 0) return '';
  if (segmentation === 'tags') return steps.map((s) => `${CHUNK_OPEN}\n${s}\n${CHUNK_CLOSE}`).join('\n');
  return `${steps.join('\n\n')}\n\n`;
}
