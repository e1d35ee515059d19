import type { Segmentation } from '../../src/core/segment.js';
import type { Problem } from '../../src/core/types.js';
import { parseCodePolicyPrompt } from '../../src/prompts/code.js';
import { scriptedModel } from './scripted-model.js';

/** An MBPP-style toy code problem: its tests are asserts on `add`. */
export const toyAddProblem: Problem = {
  id: 'toy/add',
  question: 'Write a function to add two numbers.',
  answer: 'assert add(1, 2) == 3\nassert add(-1, 1) == 0',
  domain: 'code',
  source: 'mbpp',
  meta: { test_list: ['assert add(1, 2) == 3', 'assert add(-1, 1) == 0'], test_setup_code: '' },
};

/** A HumanEval-style toy problem: the signature and docstring come with it. */
export const humanevalAddProblem: Problem = {
  id: 'HumanEval/add',
  question: 'def add(a, b):\n    """Return a + b."""\n',
  answer: 'def check(candidate):\n    assert candidate(1, 2) == 3\n',
  domain: 'code',
  source: 'humaneval',
  meta: { entry_point: 'add' },
};

/**
 * A scripted in-process code policy: for each code prefix, the next texts to return, in order
 * (the last repeats); `'```'` is the closing fence (returned empty, stopped on it). It answers
 * only the code prompt of `segmentation`, and says it stopped where a block ends under it.
 */
export function scriptedCodeModel(
  script: Record<string, string[]>,
  segmentation: Segmentation = 'paragraph',
) {
  const served = new Map<string, number>();
  const blockEnd = segmentation === 'tags' ? '</chunk>' : '\n\n';
  return scriptedModel(
    (request) => {
      const parsed = parseCodePolicyPrompt(request.prompt ?? request.messages ?? '');
      if (parsed?.segmentation !== segmentation) throw new Error(`not a ${segmentation} code policy prompt`);
      const options = script[parsed.prefix];
      if (!options) throw new Error(`no script for prefix ${JSON.stringify(parsed.prefix)}`);
      return Array.from({ length: request.n ?? 1 }, () => {
        const k = served.get(parsed.prefix) ?? 0;
        served.set(parsed.prefix, k + 1);
        const text = options[Math.min(k, options.length - 1)];
        const end = text === '```';
        return { text: end ? '' : text, stopReason: end ? '```' : blockEnd, completionTokens: text.length };
      });
    },
    { provider: 'scripted', modelId: `scripted-code-${segmentation}`, capabilities: { logprobs: false } },
  );
}
