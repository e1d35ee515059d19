/**
 * Structural reading of a normalised answer: lists of several answers, tuples, intervals, sets,
 * unions, relations (equations, inequalities, membership), multiple-choice letters, text, and
 * plain expressions (which {@link ./numeric.ts} evaluates).
 */

/** One node of a parsed answer. */
export type AnswerNode =
  | { kind: 'expr'; latex: string }
  | { kind: 'text'; text: string }
  | { kind: 'choice'; letter: string }
  | {
      kind: 'list';
      /** Opening and closing bracket (`(`, `[`, `{`, or `` for a bare list). */
      open: string;
      close: string;
      items: AnswerNode[];
    }
  | { kind: 'union'; items: AnswerNode[] }
  | { kind: 'rel'; ops: RelOp[]; sides: AnswerNode[]; latex: string[] };

/** Relation operators, normalised. */
export type RelOp = '=' | '≈' | '<' | '≤' | '>' | '≥' | '≠' | '∈';

const MAX_ITEMS = 64;

/** Index of the bracket closing the one at `open`, treating (), [], {}, \{ \} alike; -1 if none. */
function matchingClose(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const ch = s[i];
    if (ch === '\\') {
      const next = s[i + 1];
      if (next === '{') depth++;
      else if (next === '}') {
        depth--;
        if (depth === 0) return i;
      }
      i++;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      depth--;
      if (depth === 0) return i;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/**
 * Split `s` at top-level (bracket depth 0, outside `\begin…\end`) positions where `isSep` matches.
 * `isSep` returns the separator length at index i, or 0.
 */
function splitTop(s: string, isSep: (s: string, i: number) => number): string[] {
  const parts: string[] = [];
  let depth = 0;
  let envDepth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (depth <= 0 && envDepth <= 0 && ch === '\\') {
      const len = isSep(s, i);
      if (len > 0) {
        parts.push(s.slice(start, i));
        start = i + len;
        i += len - 1;
        continue;
      }
    }
    if (ch === '\\') {
      if (s.startsWith('\\begin', i)) envDepth++;
      else if (s.startsWith('\\end', i)) envDepth--;
      else if (s[i + 1] === '{' || s[i + 1] === '[' || s[i + 1] === '(') depth++;
      else if (s[i + 1] === '}' || s[i + 1] === ']' || s[i + 1] === ')') depth--;
      i++;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
    else if (depth <= 0 && envDepth <= 0) {
      const len = isSep(s, i);
      if (len > 0) {
        parts.push(s.slice(start, i));
        start = i + len;
        i += len - 1;
        if (parts.length > MAX_ITEMS) break;
      }
    }
  }
  parts.push(s.slice(start));
  return parts.map((p) => p.trim());
}

const isComma = (s: string, i: number): number => (s[i] === ',' ? 1 : 0);
const isCommaOrSemicolon = (s: string, i: number): number => (s[i] === ',' || s[i] === ';' ? 1 : 0);

/** `;`, and the words "and" / "or" (when not glued to other letters) separate answer groups. */
function isGroupSep(s: string, i: number): number {
  if (s[i] === ';') return 1;
  const c = s[i];
  if (c !== 'a' && c !== 'o') return 0;
  const m = /^(?:and|or)(?![a-zA-Z])/.exec(s.slice(i, i + 4));
  if (!m) return 0;
  const prev = s[i - 1];
  if (prev !== undefined && /[a-zA-Z\\]/.test(prev)) return 0;
  return m[0].length;
}

const REL_PATTERNS: Array<[RegExp, RelOp]> = [
  [/^\\approx(?![a-zA-Z])/, '≈'],
  [/^\\(?:leq|leqslant|le)(?![a-zA-Z])/, '≤'],
  [/^\\(?:geq|geqslant|ge)(?![a-zA-Z])/, '≥'],
  [/^\\(?:neq|ne)(?![a-zA-Z])/, '≠'],
  [/^\\lt(?![a-zA-Z])/, '<'],
  [/^\\gt(?![a-zA-Z])/, '>'],
  [/^\\in(?![a-zA-Z])/, '∈'],
  [/^<=/, '≤'],
  [/^>=/, '≥'],
  [/^!=/, '≠'],
  [/^≤/, '≤'],
  [/^≥/, '≥'],
  [/^≠/, '≠'],
  [/^≈/, '≈'],
  [/^=/, '='],
  [/^</, '<'],
  [/^>/, '>'],
];

/** Split at top-level relation operators. */
function splitRelations(s: string): { parts: string[]; ops: RelOp[] } {
  const parts: string[] = [];
  const ops: RelOp[] = [];
  let depth = 0;
  let envDepth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (
      depth <= 0 &&
      envDepth <= 0 &&
      (ch === '\\' || ch === '<' || ch === '>' || ch === '=' || ch === '!' || ch >= '\u2248')
    ) {
      const rest = s.slice(i, i + 12);
      const hit = REL_PATTERNS.find(([re]) => re.test(rest));
      if (hit) {
        const len = hit[0].exec(rest)![0].length;
        parts.push(s.slice(start, i).trim());
        ops.push(hit[1]);
        start = i + len;
        i += len - 1;
        continue;
      }
    }
    if (ch === '\\') {
      if (s.startsWith('\\begin', i)) envDepth++;
      else if (s.startsWith('\\end', i)) envDepth--;
      else if (s[i + 1] === '{') depth++;
      else if (s[i + 1] === '}') depth--;
      i++;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  parts.push(s.slice(start).trim());
  return { parts, ops };
}

/** A word answer: letters, spaces and light punctuation only, with at least one 3+ letter word. */
function isWords(s: string): boolean {
  return (
    /^[a-zA-Z][a-zA-Z\s'.,-]*$/.test(s) &&
    /[a-zA-Z]{3}/.test(s) &&
    !/^(?:sin|cos|tan|log|ln|exp|sqrt)\b/.test(s)
  );
}

/** Parse a normalised answer string into a tree. */
export function parseAnswer(s: string, depth = 0): AnswerNode {
  const text = s.trim();
  if (depth > 12 || text.length === 0) return { kind: 'text', text };

  // Multiple-choice letter: "C", "(C)", "C. x = 42", "C) 42".
  const choice = /^\(?([A-Z])\)?$/.exec(text) ?? /^\(?([A-Z])[.)]\s+\S/.exec(text);
  if (choice && !/^[A-Z]\s*=/.test(text)) return { kind: 'choice', letter: choice[1] };

  // Groups separated by ";" / "and" / "or", then items separated by ",".
  const groups = splitTop(text, isGroupSep).filter((g) => g !== '');
  if (groups.length > 1) {
    const items: AnswerNode[] = [];
    for (const g of groups) {
      const inner = splitTop(g, isComma).filter((p) => p !== '');
      const named = inner.map((p) => splitRelations(p));
      if (
        inner.length > 1 &&
        named.every((r) => r.ops.length === 1 && r.ops[0] === '=' && isSimpleName(r.parts[0]))
      ) {
        // "p=5, q=2; p=7, q=2": each group is one solution tuple.
        items.push({
          kind: 'list',
          open: '(',
          close: ')',
          items: named.map((r) => parseAnswer(r.parts[1], depth + 1)),
        });
      } else {
        for (const p of inner) items.push(...expandPlusMinus(p).map((q) => parseAnswer(q, depth + 1)));
      }
    }
    return items.length === 1 ? items[0] : { kind: 'list', open: '', close: '', items };
  }

  const parts = splitTop(text, isComma).filter((p) => p !== '');
  if (parts.length > 1 || /\\pm|\\mp|±|∓/.test(text)) {
    const items = parts.flatMap((p) => expandPlusMinus(p)).map((p) => parseAnswer(p, depth + 1));
    if (items.length === 1) return items[0];
    // "x = 1, 2, 3": a name on the first item applies to the whole list.
    const first = items[0];
    if (
      first.kind === 'rel' &&
      first.ops.length === 1 &&
      first.ops[0] === '=' &&
      isSimpleName(first.latex[0])
    ) {
      items[0] = first.sides[1];
    }
    return { kind: 'list', open: '', close: '', items };
  }

  // Union of intervals / sets.
  const unionParts = splitTop(text, (str, i) =>
    str.startsWith('\\cup', i) && !/[a-zA-Z]/.test(str[i + 4] ?? '') ? 4 : 0,
  );
  if (unionParts.length > 1)
    return { kind: 'union', items: unionParts.map((p) => parseAnswer(p, depth + 1)) };

  // Relations.
  const rel = splitRelations(text);
  if (rel.ops.length > 0 && rel.parts.every((p) => p !== '')) {
    return {
      kind: 'rel',
      ops: rel.ops,
      sides: rel.parts.map((p) => parseAnswer(p, depth + 1)),
      latex: rel.parts,
    };
  }

  // Bracketed tuple / interval / set.
  const bracket = parseBracketed(text, depth);
  if (bracket) return bracket;

  if (isWords(text)) return { kind: 'text', text };
  return { kind: 'expr', latex: text };
}

function parseBracketed(text: string, depth: number): AnswerNode | null {
  let open = text[0];
  let bodyStart = 1;
  if (text.startsWith('\\{')) {
    open = '{';
    bodyStart = 2;
  } else if (text.startsWith('\\langle')) {
    open = '⟨';
    bodyStart = 7;
  }
  if (open !== '(' && open !== '[' && open !== '{' && open !== '⟨') return null;
  let closeIdx: number;
  let close: string;
  if (open === '⟨') {
    closeIdx = text.lastIndexOf('\\rangle');
    if (closeIdx !== text.length - 7) return null;
    close = '⟩';
  } else {
    closeIdx = matchingClose(text, 0);
    const expectedEnd = text.endsWith('\\}') ? text.length - 2 : text.length - 1;
    if (closeIdx !== expectedEnd) return null;
    close = text.endsWith('\\}') ? '}' : text[text.length - 1];
  }
  const body = text.slice(bodyStart, closeIdx);
  const items = splitTop(body, isCommaOrSemicolon);
  if (open === '{' && close === '}') {
    if (items.length === 1 && items[0] === '') return { kind: 'list', open: '{', close: '}', items: [] };
    // A set, even of one element.
    return {
      kind: 'list',
      open: '{',
      close: '}',
      items: items.flatMap((p) => expandPlusMinus(p)).map((p) => parseAnswer(p, depth + 1)),
    };
  }
  if (items.length < 2) return null;
  return { kind: 'list', open, close, items: items.map((p) => parseAnswer(p, depth + 1)) };
}

/** Expand `a \pm b` into `a + b` and `a - b` (up to three signs, so at most eight items). */
export function expandPlusMinus(s: string): string[] {
  let out = [s];
  for (let k = 0; k < 3; k++) {
    const next: string[] = [];
    let changed = false;
    for (const item of out) {
      const m = /\\pm(?![a-zA-Z])|\\mp(?![a-zA-Z])|±|∓/.exec(item);
      if (!m) {
        next.push(item);
        continue;
      }
      changed = true;
      const minusFirst = m[0] === '\\mp' || m[0] === '∓';
      const before = item.slice(0, m.index);
      const after = item.slice(m.index + m[0].length);
      next.push(`${before}${minusFirst ? '-' : '+'}${after}`, `${before}${minusFirst ? '+' : '-'}${after}`);
    }
    out = next;
    if (!changed) break;
  }
  return out.map((x) => x.replace(/^\s*\+/, '').trim());
}

/**
 * A "name" on the left of `=`: a symbol (x, x_1, AB), a function value (f(x)), a ratio of names
 * (A:B, \frac{NO}{BO}), |AB|, or a tuple of names ((p, q)). Graders read `x = 5` as the answer 5
 * only when the left side is such a name.
 */
export function isSimpleName(latex: string): boolean {
  const s = latex.replace(/\s+/g, '');
  if (s === '' || s.length > 60) return false;
  // No numbers outside subscripts/arguments, no arithmetic besides ratio/fraction of names.
  const core = s
    .replace(/_\{[^{}]*\}|_[a-zA-Z0-9]/g, '')
    .replace(/\^\{?\\prime\}?|'/g, '')
    .replace(/\\(?:mathrm|mathbf|text|operatorname)\{([^{}]*)\}/g, '$1');
  const name = String.raw`(?:[a-zA-Z]+|\\[a-zA-Z]+)(?:\([^()]*\))?`;
  const patterns = [
    new RegExp(`^${name}$`),
    new RegExp(`^\\|${name}\\|$`),
    new RegExp(`^${name}(?::${name})+$`),
    new RegExp(`^\\\\frac\\{${name}\\}\\{${name}\\}$`),
    new RegExp(`^${name}/${name}$`),
    new RegExp(`^\\(${name}(?:,${name})+\\)$`),
  ];
  if (/^\\(?:frac|sqrt|pi|infty)$/.test(core)) return false;
  if (/^(?:sin|cos|tan|log|ln|exp)\(/.test(core)) return false;
  return patterns.some((p) => p.test(core)) && !/^\\(?:pi|infty|e)$/.test(core);
}
