import { splitLines } from '../core/segment.js';
import type { Chunk } from '../core/types.js';

/** How code is cut into steps: one per non-blank line, or one per logical block. */
export type CodeSegmentBy = 'lines' | 'blocks';

interface LogicalLine {
  /** 0-based index of the first physical line. */
  first: number;
  /** 0-based index of the last physical line (continuations, open brackets, triple-quoted strings). */
  last: number;
  indent: number;
  /** First token-ish word of the statement (`def`, `else`, `@`, `return`, …). */
  head: string;
  /** True for blank or comment-only lines. */
  empty: boolean;
  /** Starts with a string literal (a docstring candidate). */
  stringStart: boolean;
}

function indentWidth(line: string): number {
  let w = 0;
  for (const ch of line) {
    if (ch === ' ') w++;
    else if (ch === '\t') w = (Math.floor(w / 8) + 1) * 8;
    else if (ch === '\f') w = 0;
    else break;
  }
  return w;
}

/**
 * Group physical lines into logical lines the way the Python tokenizer does: brackets,
 * triple-quoted strings and backslash continuations carry a statement over to the next line.
 * Tolerant of unfinished code (a prefix being generated): whatever is open at the end just ends.
 */
function logicalLines(lines: readonly string[]): LogicalLine[] {
  const out: LogicalLine[] = [];
  let depth = 0;
  let triple: string | null = null;
  let current: LogicalLine | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const continuing = current !== null;
    if (!continuing) {
      const trimmed = line.trim();
      const empty = trimmed === '' || trimmed.startsWith('#');
      const head = /^(@|[A-Za-z_]+)/.exec(trimmed)?.[1] ?? trimmed.slice(0, 1);
      current = {
        first: i,
        last: i,
        indent: indentWidth(line),
        head,
        empty,
        stringStart: /^[rRbBuUfF]{0,2}('|")/.test(trimmed),
      };
      if (empty) {
        out.push(current);
        current = null;
        continue;
      }
    }
    const cur = current as LogicalLine;
    cur.last = i;
    // Scan the line for brackets and strings.
    let backslash = false;
    for (let j = 0; j < line.length; j++) {
      const ch = line[j];
      if (triple) {
        if (ch === '\\') j++;
        else if (line.startsWith(triple, j)) {
          j += 2;
          triple = null;
        }
        continue;
      }
      if (ch === '#') break;
      if (ch === '"' || ch === "'") {
        if (line.startsWith(ch.repeat(3), j)) {
          triple = ch.repeat(3);
          j += 2;
          continue;
        }
        // single-line string: skip to its closing quote
        let k = j + 1;
        while (k < line.length && line[k] !== ch) k += line[k] === '\\' ? 2 : 1;
        j = k;
        continue;
      }
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
      else if (ch === '\\' && j === line.length - 1) backslash = true;
    }
    if (depth === 0 && triple === null && !backslash) {
      out.push(cur);
      current = null;
    }
  }
  if (current) out.push(current);
  return out;
}

const CONTINUATIONS = new Set(['elif', 'else', 'except', 'finally', 'case']);
const DEFINITIONS = new Set(['def', 'async', 'class']);

/**
 * Split Python code into logical blocks: each top-level statement is a block, except that a
 * top-level `def` / `class` contributes its header (with decorators and docstring) as one block
 * and then one block per statement of its body. Nested blocks stay with the statement that
 * opens them (a `for` loop is one block with its whole body), `elif` / `else` / `except` /
 * `finally` stay with their `if` / `try`, and comments and blank lines go with the block after
 * them. Each chunk's text is `code.slice(span.start, span.end)` with indentation kept, so the
 * code is rebuilt exactly from chunks and gaps (`chunkGaps` / `rebuildText` in core/segment).
 * Works on unfinished code too (a prefix during generation).
 */
export function splitCodeBlocks(code: string): Chunk[] {
  const lines = code.split('\n');
  const logical = logicalLines(lines);
  // Blocks as [first line, last line] ranges.
  const blocks: Array<[number, number]> = [];
  let pendingStart: number | null = null; // comments / blanks waiting for the next block
  let bodyIndent: number | null = null; // indent of the current top-level def/class body
  let inDefinition = false; // the current block is a def/class header (docstring may follow)
  let headerOpen = false; // a decorator block waiting for its def

  const open = (first: number, last: number) => {
    blocks.push([pendingStart ?? first, last]);
    pendingStart = null;
  };
  const extend = (last: number) => {
    if (blocks.length === 0) {
      open(last, last);
      return;
    }
    blocks[blocks.length - 1][1] = last;
    pendingStart = null;
  };
  let decoratorInBody = false;

  for (const l of logical) {
    if (l.empty) {
      pendingStart ??= l.first;
      continue;
    }
    if (l.indent === 0) {
      bodyIndent = null;
      if (CONTINUATIONS.has(l.head) && blocks.length > 0) {
        extend(l.last);
        continue;
      }
      if (headerOpen) {
        extend(l.last);
        headerOpen = l.head === '@';
        inDefinition = DEFINITIONS.has(l.head);
        continue;
      }
      open(l.first, l.last);
      headerOpen = l.head === '@';
      inDefinition = DEFINITIONS.has(l.head) || headerOpen;
      continue;
    }
    // Indented: inside a top-level compound statement.
    if (!inDefinition && bodyIndent === null) {
      // Body of a top-level if/for/while/with/try: stays with its header.
      extend(l.last);
      continue;
    }
    if (bodyIndent === null) {
      bodyIndent = l.indent;
      if (l.stringStart) {
        // Docstring: part of the header block.
        extend(l.last);
        continue;
      }
    }
    if (l.indent <= bodyIndent && !CONTINUATIONS.has(l.head) && !decoratorInBody) {
      bodyIndent = l.indent;
      inDefinition = true;
      open(l.first, l.last);
      decoratorInBody = l.head === '@';
    } else {
      if (l.indent <= bodyIndent) decoratorInBody = l.head === '@';
      extend(l.last);
    }
  }
  if (pendingStart !== null && blocks.length > 0) blocks[blocks.length - 1][1] = lines.length - 1;

  // Line ranges -> character spans (trailing whitespace and blank lines trimmed).
  const lineStart: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStart.push(offset);
    offset += line.length + 1;
  }
  const chunks: Chunk[] = [];
  for (const [first, last] of blocks) {
    let start = lineStart[first];
    let end = lineStart[last] + lines[last].length;
    while (end > start && /\s/.test(code[end - 1])) end--;
    // Leading blank lines are gaps, not part of the block.
    while (start < end && (code[start] === '\n' || code[start] === '\r')) start++;
    while (start < end) {
      const nl = code.indexOf('\n', start);
      if (nl < 0 || nl >= end || code.slice(start, nl).trim() !== '') break;
      start = nl + 1;
    }
    if (end > start)
      chunks.push({ index: chunks.length, text: code.slice(start, end), span: { start, end } });
  }
  return chunks;
}

/** Split code into steps: logical blocks (default) or non-blank lines (indentation kept). */
export function segmentCode(code: string, by: CodeSegmentBy = 'blocks'): Chunk[] {
  return by === 'lines' ? splitLines(code) : splitCodeBlocks(code);
}

/** The 1-based line on which a chunk of `code` starts and ends. */
export function chunkLines(code: string, chunk: Chunk): { first: number; last: number } {
  const before = code.slice(0, chunk.span.start);
  const first = before.split('\n').length;
  return { first, last: first + chunk.text.split('\n').length - 1 };
}

/** Join code steps back into code (blocks are separated by newlines; blank lines inside a body are allowed). */
export function joinCodeSteps(steps: readonly string[]): string {
  return steps.join('\n');
}
