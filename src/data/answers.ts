/**
 * Gold-answer normalisation for the data sets. Only what loaders need: the full answer
 * extraction for model outputs lives in the answer-checking area (src/verify).
 */

/**
 * Content of the brace group that opens at `text[open]` (which must be `{`), honouring nesting
 * and backslash-escaped braces (`\{`, `\}`). Returns the inner text and the index just past the
 * closing brace, or null when the group is not closed.
 */
export function matchBraces(text: string, open: number): { inner: string; end: number } | null {
  if (text[open] !== '{') return null;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++; // an escaped character never opens or closes a group
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return { inner: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return null;
}

/**
 * Content of the last `\boxed{…}` (or `\fbox{…}`) in `text`, with nested braces kept, e.g.
 * `\boxed{\frac{1}{2}}` → `\frac{1}{2}`. Also reads the brace-less form `\boxed 5`.
 * Null when there is none or the last one is unclosed.
 */
export function lastBoxed(text: string): string | null {
  const re = /\\(?:boxed|fbox)\b/g;
  let lastStart = -1;
  let lastLength = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    lastStart = m.index;
    lastLength = m[0].length;
  }
  if (lastStart < 0) return null;
  let i = lastStart + lastLength;
  if (text[i] === ' ' && text[i + 1] !== '{') {
    // `\boxed 5`: the argument runs to the next `$` or whitespace.
    const m = /^ ([^\s$]+)/.exec(text.slice(i));
    return m ? m[1] : null;
  }
  while (text[i] === ' ') i++;
  const group = matchBraces(text, i);
  return group ? group.inner.trim() : null;
}

/**
 * GSM8K's final answer: the text after the last `####`, with commas removed
 * (`#### 1,000` → `1000`). Null when the solution has no `####` line.
 */
export function gsm8kFinalAnswer(solution: string): string | null {
  const at = solution.lastIndexOf('####');
  if (at < 0) return null;
  const answer = solution
    .slice(at + 4)
    .trim()
    .replace(/,/g, '');
  return answer === '' ? null : answer;
}
