/**
 * Final-answer extraction from a model's solution text.
 *
 * Order of preference (first that yields something wins):
 * 1. the last `\boxed{…}` / `\fbox{…}` (nested braces; `\boxed 5` form too);
 * 2. GSM8K `#### n`;
 * 3. "Final Answer: The final answer is $…$", "The (final) answer is …", "Answer: …";
 * 4. the last `$…$` / `\(…\)` / `\[…\]` math span near the end of the text;
 * 5. the last number in the text.
 */

import { matchBraces } from '../data/answers.js';

/** Inputs longer than this are cut to their tail before extraction (answers sit at the end). */
const MAX_EXTRACT_CHARS = 20_000;

/** A `\boxed{…}` / `\fbox{…}` occurrence: its content and where it sits in the text. */
interface BoxedSpan {
  inner: string;
  start: number;
  end: number;
}

function findBoxedSpans(text: string): BoxedSpan[] {
  const out: BoxedSpan[] = [];
  const re = /\\(?:boxed|fbox)(?![a-zA-Z])/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    let i = m.index + m[0].length;
    while (text[i] === ' ') i++;
    if (text[i] === '{') {
      const g = matchBraces(text, i);
      if (g) {
        out.push({ inner: g.inner, start: m.index, end: g.end });
        re.lastIndex = g.end;
      }
    } else {
      // `\boxed 5`: a single token up to whitespace or `$`.
      const tok = /^[^\s$]{1,200}/.exec(text.slice(i, i + 200));
      if (tok) out.push({ inner: tok[0], start: m.index, end: i + tok[0].length });
    }
  }
  return out;
}

/** Contents of every `\boxed{…}` / `\fbox{…}` in order of appearance (unbalanced ones are skipped). */
export function findBoxed(text: string): string[] {
  return findBoxedSpans(text).map((b) => b.inner);
}

/**
 * Text between two boxes that still lets them form one answer: math delimiters, punctuation,
 * spacing commands, `\text{…}` remarks, the words "and"/"or", and `name =` labels.
 */
function isJoinableSeparator(sep: string): boolean {
  if (sep.length > 120 || /^[\s$]*=[\s$]*$/.test(sep)) return false;
  const rest = sep
    .replace(/\\text\{[^{}]{0,60}\}/g, ' ')
    .replace(/\\q?quad|\\[,;:! ]|\\\(|\\\)|\\\[|\\\]|\$/g, ' ')
    .replace(/(?:^|\s)[a-zA-Z](?:_\{?[a-zA-Z0-9]{1,4}\}?)?\s*=/g, ' ')
    .replace(/\b(?:and|or)\b/g, ' ')
    .replace(/[\s,;.]+/g, '');
  return rest === '';
}

/** Strip a single pair of math delimiters and surrounding whitespace/punctuation. */
function tidy(ans: string): string {
  let s = ans.trim();
  for (let k = 0; k < 4; k++) {
    const before = s;
    s = s.replace(/^\\?"|\\?"$/g, '').trim();
    s = s.replace(/^\*+|\*+$/g, '').trim();
    s = s.replace(/^\$+|\$+$/g, '').trim();
    if (s.startsWith('\\(') && s.endsWith('\\)')) s = s.slice(2, -2).trim();
    if (s.startsWith('\\[') && s.endsWith('\\]')) s = s.slice(2, -2).trim();
    let end = s.length;
    while (end > 0 && /[\s.,;:!]/.test(s[end - 1])) end--;
    s = s.slice(0, end).trim();
    if (s === before) break;
  }
  return s;
}

const NUMBER_RE = /-?\d[\d,]*(?:\.\d+)?(?:\s*\/\s*\d+)?|-?\.\d+/g;
const MATH_SPAN_RE =
  /(?<!\\)\$\$((?:\\\$|[^$]){1,1000}?)\$\$|(?<!\\)\$((?:\\\$|[^$]){1,1000}?)(?<!\\)\$|\\\(([\s\S]{1,1000}?)\\\)|\\\[([\s\S]{1,1000}?)\\\]/g;

/** Last math span `$…$`, `$$…$$`, `\(…\)`, `\[…\]` in the text. */
function lastMathSpan(text: string): string | null {
  let last: string | null = null;
  MATH_SPAN_RE.lastIndex = 0;
  for (let m = MATH_SPAN_RE.exec(text); m !== null; m = MATH_SPAN_RE.exec(text)) {
    last = m[1] ?? m[2] ?? m[3] ?? m[4] ?? null;
  }
  return last;
}

/** End index of the last math span in the text (0 when there is none). */
function lastMathSpanEnd(text: string): number {
  let end = 0;
  MATH_SPAN_RE.lastIndex = 0;
  for (let m = MATH_SPAN_RE.exec(text); m !== null; m = MATH_SPAN_RE.exec(text)) end = m.index + m[0].length;
  return end;
}

/** Whether a string has words (2+ letters) outside math spans and LaTeX commands. */
function hasProse(s: string): boolean {
  const outside = s
    .replace(MATH_SPAN_RE, ' ')
    .replace(/\\begin\{array\}\{[^{}]*\}|\\(?:begin|end)\{[a-zA-Z*]*\}|\\[a-zA-Z]+/g, ' ')
    .replace(/\b(?:and|or)\b/g, ' ');
  return /[a-zA-Z]{2,}/.test(outside);
}

function lastNumber(text: string): string | null {
  let last: string | null = null;
  for (const m of text.matchAll(NUMBER_RE)) last = m[0];
  return last === null ? null : tidy(last);
}

/** From the words after an answer phrase, the answer itself. */
function answerFromPhrase(raw: string): string | null {
  // Cut at the end of the sentence ("… is 7.78. I hope it is correct.").
  let c = raw;
  const end = /\.\s+(?=[A-Z<[(])|\.\s*$|\n|<\|/.exec(c);
  if (end) c = c.slice(0, end.index);
  c = c.trim();
  if (c === '') return null;
  if (!hasProse(c)) return tidy(c) || null;
  // "The largest $n$ is 34": the part after the last " is ".
  const isMatch = [...c.matchAll(/\bis\b/g)].pop();
  if (isMatch?.index !== undefined) {
    const after = c.slice(isMatch.index + 2).trim();
    if (after && !hasProse(after)) return tidy(after) || null;
    c = after || c;
  }
  const span = lastMathSpan(c);
  if (span !== null && tidy(span) && !hasProse(span)) return tidy(span);
  return lastNumber(c);
}

/** End index of the last match of a global regex (-1 when none). */
function lastPhraseEnd(text: string, re: RegExp): number {
  let lastEnd = -1;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) lastEnd = m.index + m[0].length;
  return lastEnd;
}

/** In a fallback math span, a chain `a = b = c` answers with its last member. */
function lastOfChain(span: string): string {
  const parts = span.split(/(?<![<>!\\])=(?!=)/);
  return parts.length > 1 ? parts[parts.length - 1] : span;
}

/**
 * The final answer of a solution text, or `null` when there is none.
 * Never throws; very long inputs are cut to their last 20,000 characters.
 */
export function extractAnswer(text: string): string | null {
  try {
    return extractAnswerUnsafe(typeof text === 'string' ? text : String(text ?? ''));
  } catch {
    return null;
  }
}

function extractAnswerUnsafe(raw: string): string | null {
  let text = raw.length > MAX_EXTRACT_CHARS ? raw.slice(-MAX_EXTRACT_CHARS) : raw;
  // GSM8K calculator annotations: <<48/2=24>>
  text = text.replace(/<<[^<>\n]{0,300}>>/g, '');
  // Markdown emphasis around answer labels: **Answer:** 5, **Final Answer**: 5
  text = text.replace(/\*\*((?:final )?answer)\s*(:?)\s*\*\*/gi, '$1$2');

  const boxes = findBoxedSpans(text);
  // A "final answer is …" statement after the last box is the model's last word.
  if (boxes.length > 0) {
    const lastBoxEnd = boxes[boxes.length - 1].end;
    const statement = lastPhraseEnd(text, /final answer is[:\s]*/gi);
    if (statement > lastBoxEnd) {
      const a = answerFromPhrase(text.slice(statement, statement + 600));
      if (a) return a;
    }
  }
  if (boxes.length > 0) {
    // The last box, plus the boxes just before it when only separators sit in between
    // ("\boxed{-2} \quad\text{and}\quad \boxed{1}").
    let first = boxes.length - 1;
    while (first > 0 && isJoinableSeparator(text.slice(boxes[first - 1].end, boxes[first].start))) first--;
    // "\boxed{15\frac{39}{40}} = \boxed{\frac{639}{40}}": one answer written twice; keep the last.
    while (
      first < boxes.length - 1 &&
      /^[\s$]*=[\s$]*$/.test(text.slice(boxes[first].end, boxes[first + 1].start))
    )
      first++;
    const parts: string[] = [];
    for (const b of boxes.slice(first)) {
      const t = tidy(b.inner);
      if (t !== '' && !parts.includes(t)) parts.push(t);
    }
    return parts.length === 0 ? null : parts.join(', ');
  }

  const gsm = /####\s*([^\n]+)/.exec(text);
  if (gsm) return tidy(gsm[1]) || null;

  // "A: 42" on the last line (GSM8K model solutions).
  const aLine = /(?:^|\n|\s)A:\s*([^\n]{1,100})\s*$/.exec(text);
  if (aLine) {
    const t = tidy(aLine[1]);
    if (t) return t;
  }

  const phrases = [
    /final answer is[:\s]*/gi,
    /final answer\s*:\s*/gi,
    /\banswer is[:\s]*/gi,
    /\banswer\s*:\s*/gi,
  ];
  for (const re of phrases) {
    const lastEnd = lastPhraseEnd(text, re);
    if (lastEnd >= 0) {
      const a = answerFromPhrase(text.slice(lastEnd, lastEnd + 600));
      if (a) return a;
    }
  }

  const tail = text.slice(-600);
  const span = lastMathSpan(tail);
  // A number in the prose after the last math span is the later statement of the answer.
  const afterSpan = span === null ? tail : tail.slice(lastMathSpanEnd(tail));
  const proseNumber = lastNumber(afterSpan.replace(/\\[a-zA-Z]+/g, ' '));
  if (span !== null && proseNumber !== null) return proseNumber;
  if (span !== null && tidy(span)) {
    if (hasProse(span)) {
      const n = lastNumber(span);
      if (n !== null) return n;
    } else {
      const t = tidy(lastOfChain(span));
      if (t) return t;
    }
  }
  return lastNumber(tail);
}
