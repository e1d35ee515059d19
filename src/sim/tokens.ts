/**
 * The simulated world's tokenizer: one token per word (a run of letters), per number (a run of
 * digits) and per other non-space character; whitespace is free. Simple and documented so that
 * token counts (usage, `max_tokens`) can be checked by hand.
 */
const TOKEN_RE = /[A-Za-z]+|\d+|[^\sA-Za-z\d]/gu;

const SPACE_RE = /\s/u;

const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Number of tokens in `text` (the tokens of `TOKEN_RE`), counted by scanning characters: matching
 * the regular expression made an array per token, and the garbage of counting long replies held
 * the sim server in the collector.
 */
export function countSimTokens(text: string): number {
  let n = 0;
  let i = 0;
  const len = text.length;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (isLetter(c)) {
      n++;
      i++;
      while (i < len && isLetter(text.charCodeAt(i))) i++;
    } else if (isDigit(c)) {
      n++;
      i++;
      while (i < len && isDigit(text.charCodeAt(i))) i++;
    } else if (c < 128) {
      // ASCII whitespace as `\s` reads it: tab, line feed, vertical tab, form feed, return, space.
      if (c !== 32 && (c < 9 || c > 13)) n++;
      i++;
    } else {
      const cp = text.codePointAt(i) as number;
      if (!SPACE_RE.test(String.fromCodePoint(cp))) n++;
      i += cp > 0xffff ? 2 : 1;
    }
  }
  return n;
}

/** Token count of chat messages: the tokens of every message's content plus 2 per message (role and turn markers). */
export function countSimMessageTokens(messages: ReadonlyArray<{ content: string }>): number {
  let n = 0;
  for (const m of messages) n += countSimTokens(m.content) + 2;
  return n;
}

/**
 * Cut `text` after its `max`-th token (whitespace after it is dropped). Returns the text and
 * whether anything was cut.
 */
export function truncateSimTokens(
  text: string,
  max: number,
): { text: string; truncated: boolean; tokens: number } {
  if (max <= 0) return { text: '', truncated: text.trim() !== '', tokens: 0 };
  TOKEN_RE.lastIndex = 0;
  let n = 0;
  for (let m = TOKEN_RE.exec(text); m !== null; m = TOKEN_RE.exec(text)) {
    n++;
    if (n === max) {
      const end = m.index + m[0].length;
      const truncated = TOKEN_RE.exec(text) !== null;
      return { text: truncated ? text.slice(0, end) : text, truncated, tokens: n };
    }
  }
  return { text, truncated: false, tokens: n };
}
