import type { ChatMessage } from '../core/model.js';
import type { PromptInput, PromptReader } from './protocol.js';

/**
 * The ProcessBench critic protocol (METHODS §3–4): the whole solution with paragraphs tagged
 * `<paragraph_i>…</paragraph_i>` from 0; the model answers the index of the earliest wrong
 * paragraph, or −1, in `\boxed{}`.
 */

const HEAD =
  'The following is a math problem and a solution split into paragraphs, each enclosed in tags and indexed from 0.\n\n[Math Problem]\n\n';
const SOLUTION_MARK = '\n\n[Solution]\n\n';
const TAIL =
  '\n\nReview and critique the solution paragraph by paragraph. When you find an error in a paragraph, ' +
  'return the index of the paragraph where the earliest error occurs; if there is no error, return -1. ' +
  'Put your final answer (the index) in \\boxed{}.';

/** The paragraphs tagged `<paragraph_i>\n…\n</paragraph_i>` from 0, separated by blank lines. */
export function tagParagraphs(steps: readonly string[]): string {
  return steps.map((s, i) => `<paragraph_${i}>\n${s}\n</paragraph_${i}>`).join('\n\n');
}

/**
 * The default critic prompt is our own wording. A template (e.g. the official ProcessBench one,
 * `--critic-template FILE`) is sent verbatim with its `{problem}` and `{tagged_response}` slots
 * filled; nothing else in it changes.
 */
export function renderCriticUserMessage(
  problem: string,
  steps: readonly string[],
  template?: string,
): string {
  const tagged = tagParagraphs(steps);
  if (template !== undefined)
    // split/join, not replace: `$` sequences in a problem must not act as replacement patterns.
    return template.split('{problem}').join(problem).split('{tagged_response}').join(tagged);
  return `${HEAD}${problem}${SOLUTION_MARK}${tagged}${TAIL}`;
}

/** Throws when a critic template lacks one of its slots (`{problem}`, `{tagged_response}`). */
export function checkCriticTemplate(template: string, where: string): void {
  const missing = ['{problem}', '{tagged_response}'].filter((slot) => !template.includes(slot));
  if (missing.length > 0)
    throw new Error(`${where}: the critic template has no ${missing.join(' and no ')} slot`);
}

export function renderCriticMessages(
  problem: string,
  steps: readonly string[],
  template?: string,
): ChatMessage[] {
  return [{ role: 'user', content: renderCriticUserMessage(problem, steps, template) }];
}

/** Inverse of {@link renderCriticUserMessage}; null when the text is not a critic prompt. */
export function parseCriticPrompt(input: PromptInput): { problem: string; steps: string[] } | null {
  const text = typeof input === 'string' ? input : (input.find((m) => m.role === 'user')?.content ?? '');
  if (!text.startsWith(HEAD) || !text.endsWith(TAIL)) return null;
  const s = text.indexOf(SOLUTION_MARK);
  if (s < 0) return null;
  const problem = text.slice(HEAD.length, s);
  const body = text.slice(s + SOLUTION_MARK.length, text.length - TAIL.length);
  const steps: string[] = [];
  for (let i = 0; ; i++) {
    const open = `<paragraph_${i}>\n`;
    const close = `\n</paragraph_${i}>`;
    const a = body.indexOf(open);
    if (a < 0) break;
    const b = body.indexOf(close, a + open.length);
    if (b < 0) return null;
    steps.push(body.slice(a + open.length, b));
  }
  return { problem, steps };
}

/** The critic prompt's reader (protocol.ts): the default wording only (a template is not read). */
export const criticPromptReader: PromptReader<'critic'> = {
  kind: 'critic',
  family: 'critic',
  read(input) {
    const c = parseCriticPrompt(input);
    return c && { kind: 'critic', problem: c.problem, steps: c.steps };
  },
};

/** The last `\boxed{<int>}` in a critic's reply; null = format failure. */
export function parseCriticAnswer(reply: string): number | null {
  const re = /\\boxed\{\s*(-?\d+)\s*\}/g;
  let last: number | null = null;
  for (let m = re.exec(reply); m; m = re.exec(reply)) last = Number.parseInt(m[1], 10);
  return last;
}
