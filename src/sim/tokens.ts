/**
 * The simulated world's tokenizer: one token per word (a run of letters), per number (a run of
 * digits) and per other non-space character; whitespace is free. Simple and documented so that
 * token counts (usage, `max_tokens`) can be checked by hand.
 */
const TOKEN_RE = /[A-Za-z]+|\d+|[^\sA-Za-z\d]/gu;

/** Number of tokens in `text`. */
export function countSimTokens(text: string): number {
  let n = 0;
  TOKEN_RE.lastIndex = 0;
  while (TOKEN_RE.exec(text) !== null) n++;
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
