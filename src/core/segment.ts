import { UsageError } from './errors.js';
import type { Chunk } from './types.js';

/** The rule-based splitters (METHODS §1). */
export type SegmentBy = 'paragraph' | 'steps' | 'tags' | 'lines';

export const SEGMENT_MODES: readonly SegmentBy[] = ['paragraph', 'steps', 'tags', 'lines'];

/**
 * Chunks from content ranges: each chunk's text is exactly `text.slice(start, end)`.
 * Empty ranges (all whitespace) are dropped; ranges are trimmed of surrounding whitespace.
 */
function chunksFromRanges(text: string, ranges: Array<[number, number]>): Chunk[] {
  const chunks: Chunk[] = [];
  for (let [start, end] of ranges) {
    while (start < end && /\s/.test(text[start])) start++;
    while (end > start && /\s/.test(text[end - 1])) end--;
    if (end > start)
      chunks.push({ index: chunks.length, text: text.slice(start, end), span: { start, end } });
  }
  return chunks;
}

/** Split on blank lines (`\n\n`, possibly with spaces between): the ProcessBench / Qwen-PRM convention. */
export function splitParagraphs(text: string): Chunk[] {
  const ranges: Array<[number, number]> = [];
  const sep = /\n[ \t\r]*\n/g;
  let last = 0;
  for (let m = sep.exec(text); m; m = sep.exec(text)) {
    ranges.push([last, m.index]);
    last = m.index + m[0].length;
  }
  ranges.push([last, text.length]);
  return chunksFromRanges(text, ranges);
}

/** Split before every `Step k:` (or `Step k.`) marker at the start of a line; text before the first marker is a chunk too. */
export function splitSteps(text: string): Chunk[] {
  const marker = /^[ \t]*(?:#+\s*)?\**Step\s+\d+\**\s*[:.]/gim;
  const starts: number[] = [];
  for (let m = marker.exec(text); m; m = marker.exec(text)) starts.push(m.index);
  if (starts.length === 0) return chunksFromRanges(text, [[0, text.length]]);
  const ranges: Array<[number, number]> = [];
  if (starts[0] > 0) ranges.push([0, starts[0]]);
  starts.forEach((s, i) => {
    ranges.push([s, i + 1 < starts.length ? starts[i + 1] : text.length]);
  });
  return chunksFromRanges(text, ranges);
}

/** One chunk per non-blank line (code). */
export function splitLines(text: string): Chunk[] {
  const ranges: Array<[number, number]> = [];
  let last = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || text[i] === '\n') {
      ranges.push([last, i]);
      last = i + 1;
    }
  }
  // Lines keep their indentation (it matters for code): trim only the line end.
  const chunks: Chunk[] = [];
  for (let [start, end] of ranges) {
    while (end > start && /\s/.test(text[end - 1])) end--;
    if (end > start)
      chunks.push({ index: chunks.length, text: text.slice(start, end), span: { start, end } });
  }
  return chunks;
}

const OPEN = '<chunk>';
const CLOSE = '</chunk>';

/**
 * The text with every `<chunk>` / `</chunk>` tag removed, in one left-to-right pass like
 * {@link parseChunkTags}. (Removing all opening tags first and then all closing tags would turn
 * `</chu<chunk>nk>` into the empty string: removing one tag can form another.)
 */
export function stripChunkTags(tagged: string): string {
  return tagged.replace(/<\/?chunk>/g, '');
}

/** Result of parsing `<chunk>`-tagged text: chunks with spans into the tag-free text. */
export interface TaggedParse {
  /** The text with tags removed. */
  text: string;
  chunks: Chunk[];
  /** Why the tagging is malformed (unbalanced, nested, text outside tags), if it is. */
  problem?: string;
}

/** Parse `<chunk>…</chunk>` tags. Spans index the tag-free text, so `text.slice(span)` is the chunk. */
export function parseChunkTags(tagged: string): TaggedParse {
  const ranges: Array<[number, number]> = [];
  let plain = '';
  let open = -1;
  let problem: string | undefined;
  let i = 0;
  while (i < tagged.length) {
    if (tagged.startsWith(OPEN, i)) {
      if (open >= 0) problem ??= `nested <chunk> at character ${i}`;
      else open = plain.length;
      i += OPEN.length;
    } else if (tagged.startsWith(CLOSE, i)) {
      if (open < 0) problem ??= `</chunk> without <chunk> at character ${i}`;
      else ranges.push([open, plain.length]);
      open = -1;
      i += CLOSE.length;
    } else {
      if (open < 0 && !/\s/.test(tagged[i])) problem ??= `text outside any <chunk> at character ${i}`;
      plain += tagged[i];
      i++;
    }
  }
  if (open >= 0) problem ??= 'unclosed <chunk>';
  if (ranges.length === 0) problem ??= 'no <chunk> tags';
  return { text: plain, chunks: chunksFromRanges(plain, ranges), problem };
}

/** Split text by one of the rule-based modes. For `tags`, spans refer to the tag-free text. */
export function segment(text: string, by: SegmentBy): Chunk[] {
  switch (by) {
    case 'paragraph':
      return splitParagraphs(text);
    case 'steps':
      return splitSteps(text);
    case 'lines':
      return splitLines(text);
    case 'tags':
      return parseChunkTags(text).chunks;
  }
}

/** Outcome of validated self-segmentation. */
export interface SelfSegmentation {
  chunks: Chunk[];
  /** True when the model's tagging was accepted. */
  accepted: boolean;
  /** Why it was rejected and the fallback splitter used. */
  reason?: string;
}

/**
 * Validated self-segmentation (METHODS §1): a model's `<chunk>`-tagged rewrite of `original`
 * is accepted only if removing the tags gives back `original` exactly and the tags are well
 * formed; otherwise `fallback` splits the original and the reason is reported.
 */
export function validateSelfSegmentation(
  original: string,
  tagged: string,
  fallback: Exclude<SegmentBy, 'tags'> = 'paragraph',
): SelfSegmentation {
  const parsed = parseChunkTags(tagged);
  let reason: string | undefined;
  if (parsed.text !== original) {
    let at = 0;
    while (at < original.length && original[at] === parsed.text[at]) at++;
    reason = `tags do not strip back to the original text (first difference at character ${at})`;
  } else if (parsed.problem) {
    reason = parsed.problem;
  }
  if (reason === undefined) return { chunks: parsed.chunks, accepted: true };
  return { chunks: segment(original, fallback), accepted: false, reason };
}

/**
 * The separators around chunks: `gaps[0]` before the first chunk, `gaps[i]` between chunk i−1
 * and i, `gaps[n]` after the last. With them the text is rebuilt exactly by {@link rebuildText}.
 */
export function chunkGaps(text: string, chunks: readonly Chunk[]): string[] {
  const gaps: string[] = [];
  let last = 0;
  for (const c of chunks) {
    gaps.push(text.slice(last, c.span.start));
    last = c.span.end;
  }
  gaps.push(text.slice(last));
  return gaps;
}

/** Inverse of {@link chunkGaps}: gap, chunk, gap, …, chunk, gap. */
export function rebuildText(chunks: readonly Chunk[], gaps: readonly string[]): string {
  let out = gaps[0] ?? '';
  chunks.forEach((c, i) => {
    out += c.text + (gaps[i + 1] ?? '');
  });
  return out;
}

/** Chunks from a list of step strings joined by a separator (default `\n\n`), with spans into the joined text. */
export function chunksFromSteps(
  steps: readonly string[],
  separator = '\n\n',
): { text: string; chunks: Chunk[] } {
  const chunks: Chunk[] = [];
  let text = '';
  steps.forEach((s, i) => {
    if (i > 0) text += separator;
    chunks.push({ index: i, text: s, span: { start: text.length, end: text.length + s.length } });
    text += s;
  });
  return { text, chunks };
}

/**
 * How a job's policy segments its solutions: `paragraph` (blank lines, the ProcessBench
 * convention) or `tags` (self-segmentation, METHODS §1: the policy wraps each chunk in
 * `<chunk>…</chunk>`). Every job that writes or continues solutions carries one.
 */
export type Segmentation = 'paragraph' | 'tags';

export const SEGMENTATIONS: readonly Segmentation[] = ['paragraph', 'tags'];

export const CHUNK_OPEN = OPEN;
export const CHUNK_CLOSE = CLOSE;

/** A solution split as its writer wrote it: spans index the written text, tags included. */
export interface WrittenChunks {
  /** Chunk contents (trimmed); `text` is `written.slice(span.start, span.end)`. */
  chunks: Chunk[];
  /**
   * `ends[i]`: where the prefix made of chunks 0..i ends in the written text. With tags it is
   * right after chunk i's `</chunk>`, so a prefix is the writer's own text up to that point.
   */
  ends: number[];
  /** The splitter that produced the chunks: `paragraph` for a tags reply that was rejected. */
  method: Segmentation;
  /** Why the tags were rejected (then the chunks are the paragraphs of the tag-free text). */
  problem?: string;
}

/**
 * Parse `<chunk>`-tagged text in place: contents and their spans in the tagged text itself,
 * and where each chunk's closing tag ends. Well formed = every chunk opened and closed once,
 * no nesting, nothing but whitespace outside the tags, at least one chunk. Contents are trimmed;
 * with `keepIndent` (code) a content's first line keeps its indentation.
 */
export function parseWrittenTags(
  written: string,
  options: { keepIndent?: boolean } = {},
): { chunks: Chunk[]; ends: number[]; problem?: string } {
  const chunks: Chunk[] = [];
  const ends: number[] = [];
  let problem: string | undefined;
  let open = -1;
  let i = 0;
  while (i < written.length) {
    if (written.startsWith(OPEN, i)) {
      if (open >= 0) problem ??= `nested <chunk> at character ${i}`;
      open = i + OPEN.length;
      i = open;
    } else if (written.startsWith(CLOSE, i)) {
      if (open < 0) problem ??= `</chunk> without <chunk> at character ${i}`;
      else {
        let start = open;
        let end = i;
        while (start < end && /\s/.test(written[start])) start++;
        while (end > start && /\s/.test(written[end - 1])) end--;
        // Code: the first line keeps its indentation (spaces and tabs back to its line start).
        if (options.keepIndent && end > start)
          while (start > open && (written[start - 1] === ' ' || written[start - 1] === '\t')) start--;
        if (end > start) {
          chunks.push({ index: chunks.length, text: written.slice(start, end), span: { start, end } });
          ends.push(i + CLOSE.length);
        }
      }
      open = -1;
      i += CLOSE.length;
    } else {
      if (open < 0 && !/\s/.test(written[i])) problem ??= `text outside any <chunk> at character ${i}`;
      i++;
    }
  }
  if (open >= 0) problem ??= 'unclosed <chunk>';
  if (chunks.length === 0) problem ??= 'no <chunk> tags';
  return problem === undefined ? { chunks, ends } : { chunks, ends, problem };
}

/**
 * Split a solution as written under a segmentation. `paragraph`: blank-line paragraphs, each
 * prefix ending where the next paragraph starts. `tags`: the policy's own chunks; a reply whose
 * tags are malformed falls back to the paragraphs of its tag-free text (`method: 'paragraph'`,
 * `problem` says why; spans then index that tag-free text). `keepIndent` is for code: contents
 * keep their first line's indentation, and the tag-free text drops the tag lines.
 */
export function splitWritten(
  written: string,
  mode: Segmentation,
  options: { keepIndent?: boolean } = {},
): WrittenChunks {
  if (mode === 'tags') {
    const parsed = parseWrittenTags(written, options);
    if (parsed.problem === undefined) return { chunks: parsed.chunks, ends: parsed.ends, method: 'tags' };
    const plain = options.keepIndent ? codeWithoutTags(written) : stripChunkTags(written);
    return { ...paragraphsWithEnds(plain), method: 'paragraph', problem: parsed.problem };
  }
  return { ...paragraphsWithEnds(written), method: 'paragraph' };
}

function paragraphsWithEnds(text: string): { chunks: Chunk[]; ends: number[] } {
  const chunks = splitParagraphs(text);
  return {
    chunks,
    ends: chunks.map((_, i) => (i + 1 < chunks.length ? chunks[i + 1].span.start : text.length)),
  };
}

/**
 * Code written under tags without its tags: a line holding only `<chunk>` or `</chunk>` goes
 * with its line break, and any other tag is cut out of its line (the code keeps its indentation).
 */
export function codeWithoutTags(written: string): string {
  return written.replace(/^[ \t]*<\/?chunk>[ \t]*(?:\r?\n|$)/gm, '').replace(/<\/?chunk>/g, '');
}

/**
 * A prefix in the written form of a segmentation, rebuilt from chunk contents (for solutions
 * whose written text is not known). `paragraph`: chunks joined by blank lines plus a trailing
 * blank line. `tags`: each chunk in `<chunk>…</chunk>`, one per line, ending right after the
 * last `</chunk>`. Empty list → empty prefix.
 */
export function writtenPrefix(chunks: readonly string[], mode: Segmentation): string {
  if (chunks.length === 0) return '';
  if (mode === 'tags') return chunks.map((c) => `${OPEN}${c}${CLOSE}`).join('\n');
  return `${chunks.join('\n\n')}\n\n`;
}

/** The stop string of one step-wise call: the step separator, or `</chunk>` under tags. */
export function stepStop(mode: Segmentation, separator = '\n\n'): string {
  return mode === 'tags' ? CLOSE : separator;
}

/** Parse a `--segmentation` value; throws with the accepted values. */
export function parseSegmentation(value: unknown, where = '--segmentation'): Segmentation {
  if (value === 'paragraph' || value === 'tags') return value;
  throw new UsageError(`${where}: expected paragraph or tags, got ${JSON.stringify(value)}`);
}

/** How whitespace between chunks is compared when a tagged rewrite is checked against its original. */
export type WhitespaceRule = 'between-chunks' | 'exact';

/** A tagged rewrite of an original text, checked and mapped back onto the original. */
export interface TaggedAlignment {
  /** Chunks of the ORIGINAL text: `text === original.slice(span.start, span.end)`. */
  chunks: Chunk[];
  /** Why the rewrite is rejected; absent when accepted. */
  problem?: string;
}

/**
 * Check a model's `<chunk>`-tagged rewrite of `original` and map its chunks onto the original.
 *
 * The rule: every character of the original must come back, in order, with nothing added or
 * changed. Whitespace is the one thing compared loosely, and only BETWEEN chunks: the whitespace
 * that separates two chunks (after one chunk's last non-space character and before the next
 * chunk's first) belongs to no chunk, so the rewrite may put any whitespace there — a newline
 * after `</chunk>` where the original had a space, say — and the original's own whitespace is
 * what the spans leave out. Whitespace inside a chunk must match exactly. With `exact`, removing
 * the tags must give back the original character for character, whitespace included.
 */
export function alignTaggedRewrite(
  original: string,
  tagged: string,
  rule: WhitespaceRule = 'between-chunks',
): TaggedAlignment {
  const parsed = parseWrittenTags(tagged);
  if (parsed.problem !== undefined) return { chunks: [], problem: parsed.problem };
  if (rule === 'exact') {
    const plain = stripChunkTags(tagged);
    if (plain !== original) {
      let at = 0;
      while (at < original.length && original[at] === plain[at]) at++;
      return {
        chunks: [],
        problem: `removing the tags does not give back the original (first difference at character ${at})`,
      };
    }
  }
  const chunks: Chunk[] = [];
  let pos = 0;
  for (const c of parsed.chunks) {
    while (pos < original.length && /\s/.test(original[pos])) pos++;
    if (!original.startsWith(c.text, pos)) {
      let at = 0;
      while (at < c.text.length && original[pos + at] === c.text[at]) at++;
      return {
        chunks: [],
        problem: `chunk ${c.index} differs from the original at character ${pos + at} (the rewrite changed the text)`,
      };
    }
    chunks.push({ index: chunks.length, text: c.text, span: { start: pos, end: pos + c.text.length } });
    pos += c.text.length;
  }
  while (pos < original.length && /\s/.test(original[pos])) pos++;
  if (pos < original.length)
    return { chunks: [], problem: `the rewrite leaves out the original from character ${pos}` };
  return { chunks };
}
