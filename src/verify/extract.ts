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

/** Inputs longer than this are cut to their tail before extraction (answers sit at the end). */
const MAX_EXTRACT_CHARS = 20_000;

/** Read a brace group starting at `open` (which must be `{`); returns the inner text and end index. */
export function readBraceGroup(text: string, open: number): { inner: string; end: number } | null {
  if (text[open] !== '{') return null;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++; // skip escaped char such as \{ or \}
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

/** Contents of every `\boxed{…}` / `\fbox{…}` in order of appearance (unbalanced ones are skipped). */
export function findBoxed(text: string): string[] {
  const out: string[] = [];
  const re = /\\(?:boxed|fbox)\b/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    let i = m.index + m[0].length;
    while (text[i] === ' ') i++;
    if (text[i] === '{') {
      const g = readBraceGroup(text, i);
      if (g) {
        out.push(g.inner);
        re.lastIndex = g.end;
      }
    } else {
      // `\boxed 5` — a single token up to whitespace or `$`.
      const tok = /^[^\s$]+/.exec(text.slice(i, i + 200));
      if (tok) out.push(tok[0]);
    }
  }
  return out;
}

/** Strip a single pair of math delimiters and surrounding whitespace/punctuation. */
function tidy(ans: string): string {
  let s = ans.trim();
  for (let k = 0; k < 3; k++) {
    const before = s;
    s = s.replace(/^\$+|\$+$/g, '').trim();
    if (s.startsWith('\\(') && s.endsWith('\\)')) s = s.slice(2, -2).trim();
    if (s.startsWith('\\[') && s.endsWith('\\]')) s = s.slice(2, -2).trim();
    s = s.replace(/[\s.,;:!]+$/, '').trim();
    if (s === before) break;
  }
  return s;
}

const NUMBER_RE = /-?\d[\d,]*(?:\.\d+)?(?:\s*\/\s*\d+)?|-?\.\d+/g;

/** Last math span `$…$`, `$$…$$`, `\(…\)`, `\[…\]` in the text. */
function lastMathSpan(text: string): string | null {
  let last: string | null = null;
  const re = /\$\$([^$]{1,2000})\$\$|\$([^$]{1,2000})\$|\\\(([\s\S]{1,2000}?)\\\)|\\\[([\s\S]{1,2000}?)\\\]/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    last = m[1] ?? m[2] ?? m[3] ?? m[4] ?? null;
  }
  return last;
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
  const text = raw.length > MAX_EXTRACT_CHARS ? raw.slice(-MAX_EXTRACT_CHARS) : raw;
  const boxed = findBoxed(text);
  if (boxed.length > 0) {
    const last = tidy(boxed[boxed.length - 1]);
    return last === '' ? null : last;
  }
  const gsm = /####\s*([^\n]+)/.exec(text);
  if (gsm) return tidy(gsm[1]) || null;

  const phrases = [
    /final answer is[:\s]*\$([^$]+)\$/gi,
    /final answer is[:\s]*\\\(([\s\S]+?)\\\)/gi,
    /(?:final answer|the answer)\s*(?:is|:)\s*:?\s*([^\n]+)/gi,
    /(?:^|\n)\s*\**answer\**\s*:\s*([^\n]+)/gi,
  ];
  for (const re of phrases) {
    let last: string | null = null;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) last = m[1];
    if (last !== null) {
      const span = lastMathSpan(last);
      const t = tidy(span ?? last);
      if (t) return t;
    }
  }
  const tail = text.slice(-600);
  const span = lastMathSpan(tail);
  if (span !== null && tidy(span)) return tidy(span);

  let lastNum: string | null = null;
  for (const m of tail.matchAll(NUMBER_RE)) lastNum = m[0];
  return lastNum === null ? null : tidy(lastNum);
}
