import type { ChatMessage } from '../core/model.js';

/**
 * The LLM segmenter's prompt (METHODS §1): split an existing solution into chunks by the
 * self-segmentation rules, copying it exactly and adding nothing but `<chunk>` tags. The
 * solution is the last thing in the user message, so it can be recovered whatever it contains.
 */

const SYSTEM =
  'You divide written solutions into chunks. You copy the text exactly and only add <chunk> and </chunk> tags.';

export const SEGMENTER_INSTRUCTION =
  'Divide the solution below into chunks by wrapping each chunk in <chunk> and </chunk>. A chunk has ' +
  'a single clear purpose, such as setting up an equation, carrying out one self-contained calculation, ' +
  'or drawing a conclusion; a new chunk starts whenever the focus or phase of the reasoning changes. ' +
  'Copy the solution character for character: do not fix, reword, add or drop anything, and leave ' +
  'nothing outside the tags. Reply with the tagged solution only.';

const SOLUTION_MARK = '\n\n## Solution\n';

/** The segmenter's chat messages for one solution text. */
export function renderSegmenterMessages(text: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `${SEGMENTER_INSTRUCTION}${SOLUTION_MARK}${text}` },
  ];
}

/** The solution text of a segmenter prompt; null when the messages are not one. */
export function parseSegmenterPrompt(messages: readonly ChatMessage[]): string | null {
  const user = messages.find((m) => m.role === 'user')?.content;
  const head = `${SEGMENTER_INSTRUCTION}${SOLUTION_MARK}`;
  if (user === undefined || !user.startsWith(head)) return null;
  return user.slice(head.length);
}
