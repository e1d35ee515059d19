import type { PromptReader } from './protocol.js';

/**
 * Input formats of discriminative PRMs (INTERFACES.md).
 */

export const QWEN_PRM_SYSTEM = 'Please reason step by step, and put your final answer within \\boxed{}.';
export const QWEN_STEP_SEPARATOR = '<extra_0>';

/** Qwen2.5-Math-PRM `/pooling` input: chat-templated text, steps joined by and ending with `<extra_0>`. */
export function renderQwenPrmInput(problem: string, steps: readonly string[]): string {
  const assistant = steps.map((s) => `${s}${QWEN_STEP_SEPARATOR}`).join('');
  return (
    `<|im_start|>system\n${QWEN_PRM_SYSTEM}<|im_end|>\n` +
    `<|im_start|>user\n${problem}<|im_end|>\n` +
    `<|im_start|>assistant\n${assistant}<|im_end|><|endoftext|>`
  );
}

/** Inverse of {@link renderQwenPrmInput}; null when the text is not in that format. */
export function parseQwenPrmInput(input: string): { problem: string; steps: string[] } | null {
  const m =
    /^<\|im_start\|>system\n[\s\S]*?<\|im_end\|>\n<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>\n<\|im_start\|>assistant\n([\s\S]*)<\|im_end\|><\|endoftext\|>$/.exec(
      input,
    );
  if (!m) return null;
  const parts = m[2].split(QWEN_STEP_SEPARATOR);
  parts.pop(); // text after the final separator (empty)
  return { problem: m[1], steps: parts };
}

/** The Qwen2.5-Math-PRM input's reader (protocol.ts): `/pooling` text only, never chat messages. */
export const qwenPrmInputReader: PromptReader<'prm'> = {
  kind: 'prm',
  family: 'qwen-prm',
  read(input) {
    if (typeof input !== 'string') return null;
    const q = parseQwenPrmInput(input);
    return q && { kind: 'prm', problem: q.problem, steps: q.steps };
  },
};

/** Math-Shepherd step tag: each step ends with it; a token PRM reads P(`+`) at its position. */
export const SHEPHERD_TAG = 'ки';

/** Math-Shepherd input: `question Step 1: … ки\nStep 2: … ки`. */
export function renderShepherdInput(problem: string, steps: readonly string[]): string {
  return `${problem} ${steps.map((s, i) => `Step ${i + 1}: ${s} ${SHEPHERD_TAG}`).join('\n')}`;
}
