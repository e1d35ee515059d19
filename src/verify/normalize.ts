/**
 * String-level normalisation of an answer: the first, cheap stage of every comparison.
 * Every regular expression here is linear (no nested quantifiers), so inputs of any size are safe.
 */

/** Result of normalising one answer string. */
export interface NormalizedAnswer {
  /** Normalised text (math delimiters, spacing, units, currency, degrees and percent signs removed). */
  text: string;
  /** The answer carried a percent sign or the word percent. */
  percent: boolean;
}

/** Commands whose control-character spelling comes from a lost escape (`"\n" + "eq"` was `\neq`). */
const ESCAPE_REPAIRS: Record<string, string[]> = {
  '\n': ['neq', 'ne', 'not', 'nu', 'newline', 'nabla'],
  '\t': ['text', 'times', 'theta', 'tfrac', 'tan', 'tau', 'textbf', 'to', 'top'],
  '\f': ['frac', 'fbox'],
  '\b': ['boxed', 'beta', 'binom', 'begin', 'bar'],
  '\r': ['right', 'rho', 'rfloor', 'rceil', 'rangle'],
  '\v': ['vec', 'varepsilon', 'vert'],
  '\x07': ['approx', 'alpha', 'angle'],
};

/** Restore backslashes eaten by string escapes (`\neq` read as newline + `eq`). */
export function repairEscapes(s: string): string {
  if (!/[\n\t\f\b\r\v\x07][a-z]/.test(s)) return s;
  return s.replace(/([\n\t\f\b\r\v\x07])([a-z]+)/g, (whole, ctrl: string, rest: string) => {
    const names = ESCAPE_REPAIRS[ctrl];
    const lead = names?.[0]?.[0];
    if (!names || lead === undefined) return whole;
    const full = lead + rest;
    return names.includes(full) ? `\\${full}` : whole;
  });
}

/** Commands whose doubled backslash (`\\\\frac` from a raw-string artefact) is repaired. */
const DOUBLED_COMMANDS = new Set([
  'frac',
  'dfrac',
  'tfrac',
  'cfrac',
  'left',
  'right',
  'sqrt',
  'pi',
  'infty',
  'le',
  'leq',
  'ge',
  'geq',
  'neq',
  'cdot',
  'times',
  'text',
  'mathrm',
  'boxed',
  'pm',
  'sin',
  'cos',
  'tan',
  'log',
  'ln',
  'in',
  'cup',
  'approx',
]);

/** `\\\\frac{1}{2}` (doubled backslashes from escaping) is `\\frac{1}{2}`; row breaks `\\\\ ` stay. */
export function repairDoubledBackslashes(s: string): string {
  if (!s.includes('\\\\')) return s;
  return s.replace(/\\\\([a-zA-Z]+)/g, (whole, name: string) =>
    DOUBLED_COMMANDS.has(name) ? `\\${name}` : whole,
  );
}

/** Remove one level of `\cmd{…}` wrappers (balanced braces), keeping the content. */
export function unwrapCommand(s: string, names: string[], replacer?: (inner: string) => string): string {
  const re = new RegExp(`\\\\(?:${names.join('|')})\\s*\\{`, 'g');
  let out = '';
  let last = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    const open = m.index + m[0].length - 1;
    let depth = 0;
    let end = -1;
    for (let i = open; i < s.length; i++) {
      const ch = s[i];
      if (ch === '\\') {
        i++;
        continue;
      }
      if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) break;
    const inner = s.slice(open + 1, end);
    out += s.slice(last, m.index) + (replacer ? replacer(inner) : inner);
    last = end + 1;
    re.lastIndex = end + 1;
  }
  return last === 0 ? s : out + s.slice(last);
}

const TEXT_COMMANDS = [
  'text',
  'textbf',
  'textit',
  'textrm',
  'textnormal',
  'mbox',
  'textsf',
  'texttt',
  'emph',
];
const FONT_COMMANDS = ['mathrm', 'mathbf', 'mathit', 'mathsf', 'mathtt', 'boldsymbol', 'bm', 'operatorname'];

/** Words that name units, currencies or counted things: dropped after a number. */
const UNIT_WORD = /^[a-zA-Z]{2,}\.?$|^[a-zA-Z]{1,3}(?:\^\{?[23]\}?|[²³])\.?$|^(?:[a-zA-Z]\.){1,3}$/;

/** Strip trailing unit words (`64 square feet`, `125 miles`, `1000.99 m²`) after a numeric part. */
function stripUnits(s: string): string {
  const tokens = s.split(' ');
  // A unit glued to the number: 1000.99m², 5cm.
  const last = tokens[tokens.length - 1];
  let k = last.length;
  while (k > 0 && /[a-zA-Z²³^{}.23]/.test(last[k - 1])) k--;
  if (
    k > 0 &&
    k < last.length &&
    /\d/.test(last[k - 1]) &&
    UNIT_WORD.test(last.slice(k)) &&
    /[a-zA-Z]{2}/.test(last.slice(k))
  ) {
    tokens.splice(tokens.length - 1, 1, last.slice(0, k), last.slice(k));
  }
  let first = tokens.length;
  while (first > 0 && UNIT_WORD.test(tokens[first - 1])) first--;
  if (first === tokens.length || first === 0) return s;
  const head = tokens.slice(0, first).join(' ').trim();
  const words = tokens.slice(first);
  if (head === '' || !/\d/.test(head) || /[a-zA-Z]/.test(head.replace(/\\[a-zA-Z]+/g, ''))) return s;
  if (head.endsWith('\\')) return s;
  // A lone single letter after a number is a variable (5x, 2 y), not a unit.
  if (words.length === 1 && /^[a-zA-Z]$/.test(words[0])) return s;
  if (/[=<>]|\\(?:le|ge|leq|geq|lt|gt|neq|in)\b/.test(head)) return s;
  return head;
}

/**
 * Remove trailing punctuation (`.`, `,`, `;`, `!`, `?`), spaces and dangling backslashes. A `!`
 * right after a number, a closing bracket or a lone letter is a factorial (`5!` is 120, not 5).
 */
function trimTrailingPunctuation(s: string): string {
  let end = s.length;
  while (end > 0 && /[\s.;,!?\\]/.test(s[end - 1])) {
    if (s[end - 1] === '!' && isFactorialBang(s, end - 1)) break;
    end--;
  }
  return s.slice(0, end);
}

function isFactorialBang(s: string, at: number): boolean {
  const before = s[at - 1] ?? '';
  if (/[\d)}\]!]/.test(before)) return true;
  return /[a-zA-Z]/.test(before) && !/[a-zA-Z\\]/.test(s[at - 2] ?? '');
}

/** Upper bound on the characters normalised; longer answers are compared as raw text only. */
export const MAX_ANSWER_CHARS = 4000;

/**
 * Normalise an answer: math delimiters, `\left`/`\right`, `\dfrac`/`\tfrac`, spacing commands,
 * `\text{}` and font wrappers, thousands separators (`1,000`, `1{,}000`, `1\,000`, `1 000`),
 * currency, degrees, percent (recorded in `percent`), trailing punctuation and unit words.
 */
export function normalizeAnswer(raw: string): NormalizedAnswer {
  let s = repairDoubledBackslashes(repairEscapes(String(raw))).trim();
  if (s.length > MAX_ANSWER_CHARS) return { text: s, percent: false };
  let percent = false;

  // Math delimiters and display wrappers.
  s = s.replace(/\\\[|\\\]|\\\(|\\\)/g, ' ');
  s = unwrapCommand(s, ['boxed', 'fbox']);
  s = s.replace(/\\\$/g, ' ');
  s = s.replace(/\$/g, ' ');
  s = s.replace(/[€£¥]|\bUSD\b|\bRs\.?/g, ' ');
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)\b/g, '');
  s = s.replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\s*\.?/g, '');
  s = s.replace(/\\[dtc]frac\b/g, '\\frac');
  s = s.replace(/\\(?:dbinom|tbinom)\b/g, '\\binom');

  // Thousands separators that cannot be list commas.
  s = s.replace(/\{\s*,\s*\}/g, '');
  s = s.replace(/(\d),\\!\s*(?=\d{3})/g, '$1');
  s = s.replace(/(\d)\\[,;:]\s*(?=\d{3}(?!\d))/g, '$1');
  s = s.replace(/(\d)\\!\s*(?=\d)/g, '$1');

  // Degrees.
  s = s.replace(/\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b|\\circ\b/g, '');

  // Percent.
  if (/\\%|%/.test(s)) {
    percent = true;
    s = s.replace(/\\%|%/g, ' ');
  }
  if (/\b(?:percent|percentage|pct)\b/i.test(s)) {
    percent = true;
    s = s.replace(/\b(?:percentage|percent|pct)\b/gi, ' ');
  }

  // Text and font wrappers keep their content.
  s = unwrapCommand(s, FONT_COMMANDS);
  s = unwrapCommand(s, TEXT_COMMANDS, (inner) => ` ${inner} `);

  // Spacing commands.
  s = s.replace(/\\q?quad(?![a-zA-Z])|\\q?quad/g, ' ');
  s = s.replace(/\\hspace\*?\{[^{}]*\}/g, ' ');
  s = s.replace(/(?<!\\)\\[,;:! ]/g, ' ');
  s = s.replace(/~/g, ' ');
  s = s.replace(/[\u2009\u202f\u00a0]/g, ' ');

  s = s.replace(/\s+/g, ' ').replace(/ \^/g, '^').trim();
  // Trailing punctuation and a dangling backslash.
  s = trimTrailingPunctuation(s).trim();
  s = s.replace(/^["'`]+|["'`]+$/g, '').trim();

  // Thousands commas / spaces in a lone number: 7,425,000  1 000  1,000.99
  if (/^[-+]?\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?(?:\s|$|[a-zA-Z])/.test(s)) {
    s = s.replace(/^([-+]?\d{1,3}(?:[, ]\d{3})+)/, (m) => m.replace(/[, ]/g, ''));
  }
  s = s.replace(/\b(?:degrees?|deg)\b\.?$/i, '').trim();
  s = stripUnits(s);
  return { text: s, percent };
}
