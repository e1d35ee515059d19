import type { ChatMessage } from '../core/model.js';
import { type Segmentation, writtenPrefix } from '../core/segment.js';
import type { PromptInput, PromptReader } from './protocol.js';

/**
 * GLoRe refinement prompts (METHODS §5): global (rewrite the draft) and local (`[BAD]` marks the
 * first bad step). Under `--segmentation tags` the task asks for `<chunk>`-tagged chunks, the
 * draft is shown as the policy wrote it (its tags included, `[BAD]` at the start of the bad
 * chunk's content) and the local prefix is the policy's own text, ending right after `</chunk>`.
 */

export const BAD_MARKER = '[BAD]';

const PARAGRAPH_FORM = 'Separate steps with a blank line and put the final answer in \\boxed{}.';
const TAGS_FORM =
  'Write the solution as a sequence of chunks, each wrapped in <chunk> and </chunk>, one clear purpose per ' +
  'chunk, nothing outside the chunks, and put the final answer in \\boxed{} inside the last chunk.';

function form(segmentation: Segmentation): string {
  return segmentation === 'tags' ? TAGS_FORM : PARAGRAPH_FORM;
}

function globalTask(segmentation: Segmentation): string {
  const steps = segmentation === 'tags' ? 'solution' : 'step-by-step solution';
  return `The draft solution below may contain a mistake. Write a new, correct ${steps}. ${form(segmentation)}`;
}

function localTask(segmentation: Segmentation): string {
  const unit = segmentation === 'tags' ? 'chunk' : 'step';
  return (
    `The draft solution below contains a mistake at the ${unit} marked ${BAD_MARKER}. Keep the ${unit}s before the ` +
    `marker, and rewrite the solution from the marked ${unit} on. ${form(segmentation)}`
  );
}

/** Global refinement: the draft as written (under tags, with its `<chunk>`s). */
export function renderGlobalRefineMessages(
  question: string,
  draft: string,
  segmentation: Segmentation = 'paragraph',
): ChatMessage[] {
  return [
    { role: 'user', content: `${globalTask(segmentation)}\n\nProblem: ${question}\n\nDraft:\n${draft}` },
  ];
}

/**
 * A draft as the policy wrote it: its text, its chunk contents (each a slice of `text`, in
 * order) and `ends[i]`, where the prefix made of chunks 0..i ends in `text` (under tags right
 * after chunk i's `</chunk>`).
 */
export interface WrittenDraft {
  text: string;
  chunks: readonly string[];
  ends: readonly number[];
}

/**
 * A draft in the written form of a segmentation, rebuilt from chunk contents (when the policy's
 * own text is not known): paragraph = blank-line steps, tags = one `<chunk>` per line.
 */
export function rebuiltDraft(chunks: readonly string[], segmentation: Segmentation): WrittenDraft {
  if (segmentation === 'tags')
    return {
      text: writtenPrefix(chunks, 'tags'),
      chunks,
      ends: chunks.map((_, i) => writtenPrefix(chunks.slice(0, i + 1), 'tags').length),
    };
  // Paragraphs: a prefix ends where the next step starts (after its blank line), the last at the end.
  const text = chunks.join('\n\n');
  return {
    text,
    chunks,
    ends: chunks.map((_, i) =>
      i + 1 < chunks.length ? writtenPrefix(chunks.slice(0, i + 1), 'paragraph').length : text.length,
    ),
  };
}

/**
 * Local refinement: the draft with `[BAD]` put before chunk `firstBad`'s content; the assistant
 * turn starts with the good prefix (the draft's own text up to the end of chunk `firstBad − 1`)
 * so the policy continues from it. `draft` is the chunk contents (rebuilt in the segmentation's
 * written form) or the draft as written.
 */
export function renderLocalRefineMessages(
  question: string,
  draft: readonly string[] | WrittenDraft,
  firstBad: number,
  segmentation: Segmentation = 'paragraph',
): ChatMessage[] {
  const written = Array.isArray(draft)
    ? rebuiltDraft(draft as readonly string[], segmentation)
    : (draft as WrittenDraft);
  const prefixEnd = firstBad > 0 ? written.ends[firstBad - 1] : 0;
  const badAt = written.text.indexOf(written.chunks[firstBad], prefixEnd);
  if (badAt < 0)
    throw new RangeError(`chunk ${firstBad} is not in the written draft after character ${prefixEnd}`);
  const marked = `${written.text.slice(0, badAt)}${BAD_MARKER} ${written.text.slice(badAt)}`;
  return localMessages(question, marked, written.text.slice(0, prefixEnd), segmentation);
}

function localMessages(
  question: string,
  marked: string,
  goodPrefix: string,
  segmentation: Segmentation,
): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'user', content: `${localTask(segmentation)}\n\nProblem: ${question}\n\nDraft:\n${marked}` },
  ];
  if (goodPrefix !== '') messages.push({ role: 'assistant', content: goodPrefix });
  return messages;
}

/** Recover the parts of a refinement request (for the simulated world and tests). */
export function parseRefinePrompt(input: PromptInput): {
  kind: 'global' | 'local';
  question: string;
  draft: string;
  prefix: string;
  segmentation: Segmentation;
} | null {
  const msgs: readonly ChatMessage[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  const user = msgs.find((m) => m.role === 'user')?.content ?? '';
  for (const segmentation of ['paragraph', 'tags'] as const) {
    const kind = user.startsWith(globalTask(segmentation))
      ? 'global'
      : user.startsWith(localTask(segmentation))
        ? 'local'
        : null;
    if (!kind) continue;
    const m = /\n\nProblem: ([\s\S]*?)\n\nDraft:\n([\s\S]*)$/.exec(user);
    if (!m) return null;
    const last = msgs[msgs.length - 1];
    return {
      kind,
      question: m[1],
      draft: m[2],
      prefix: last.role === 'assistant' ? last.content : '',
      segmentation,
    };
  }
  return null;
}

/**
 * The refinement prompts' reader (protocol.ts). A raw-text request is read as one user turn
 * (so it has no good prefix to continue).
 */
export const refinePromptReader: PromptReader<'refine'> = {
  kind: 'refine',
  family: 'refine',
  read(input) {
    const r = parseRefinePrompt(input);
    if (!r) return null;
    const { question: problem, draft, segmentation } = r;
    if (r.kind === 'global') return { kind: 'refine', mode: 'global', problem, draft, segmentation };
    return {
      kind: 'refine',
      mode: 'local',
      problem,
      draft,
      badMarker: BAD_MARKER,
      prefix: r.prefix,
      segmentation,
    };
  },
};
