import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Chunk,
  chunkGaps,
  chunksFromSteps,
  parseChunkTags,
  rebuildText,
  SEGMENT_MODES,
  type SegmentBy,
  segment,
  splitParagraphs,
  stripChunkTags,
  validateSelfSegmentation,
} from '../../src/index.js';

/** Texts built from the pieces the splitters react to, plus arbitrary unicode. */
const piece = fc.oneof(
  fc.constantFrom(
    '\n',
    '\n\n',
    ' ',
    '\t',
    '\r\n',
    '\n \n',
    'Step 1:',
    'Step 12.',
    '**Step 3**:',
    '## Step 2:',
  ),
  fc.constantFrom('<chunk>', '</chunk>', '<chu', '</chu', 'nk>', '</', 'x = 2', '$\\frac{1}{2}$', 'é', '😀'),
  fc.string({ maxLength: 8 }),
);
const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));

/** The invariants every rule-based split must keep, for the text its spans index. */
function expectExactSpans(source: string, chunks: Chunk[]): void {
  let previousEnd = 0;
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.span.start).toBeGreaterThanOrEqual(previousEnd);
    expect(c.span.end).toBeGreaterThan(c.span.start);
    expect(source.slice(c.span.start, c.span.end)).toBe(c.text);
    previousEnd = c.span.end;
  });
  expect(rebuildText(chunks, chunkGaps(source, chunks))).toBe(source);
}

describe('segmentation spans rebuild the original text exactly (property)', () => {
  for (const by of SEGMENT_MODES) {
    it(`--by ${by}`, () => {
      fc.assert(
        fc.property(text, (t) => {
          const chunks = segment(t, by as SegmentBy);
          // tags spans index the tag-free text.
          expectExactSpans(by === 'tags' ? parseChunkTags(t).text : t, chunks);
        }),
        { numRuns: 400 },
      );
    });
  }

  it('paragraph and steps chunks are trimmed and non-empty; lines keep their indentation', () => {
    fc.assert(
      fc.property(text, (t) => {
        for (const by of ['paragraph', 'steps'] as const)
          for (const c of segment(t, by)) expect(c.text).toBe(c.text.trim());
        for (const c of segment(t, 'lines')) {
          expect(c.text).not.toContain('\n');
          expect(c.text.trim()).not.toBe('');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('no paragraph chunk contains a blank line', () => {
    fc.assert(
      fc.property(text, (t) => {
        for (const c of splitParagraphs(t)) expect(c.text).not.toMatch(/\n[ \t\r]*\n/);
      }),
      { numRuns: 300 },
    );
  });

  it('stripChunkTags removes exactly what parseChunkTags removes', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(stripChunkTags(t)).toBe(parseChunkTags(t).text);
      }),
      { numRuns: 500 },
    );
  });

  it('steps without blank lines, joined by "\\n\\n", split back into the same steps', () => {
    const step = text.filter((s) => s.trim() !== '' && !/\n[ \t\r]*\n/.test(s));
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const joined = chunksFromSteps(steps);
        expectExactSpans(joined.text, joined.chunks);
        expect(splitParagraphs(joined.text).map((c) => c.text)).toEqual(steps.map((s) => s.trim()));
      }),
      { numRuns: 300 },
    );
  });

  it('self-segmentation accepts a faithful tagging and rejects any edit of the text', () => {
    const plain = text.filter((t) => !t.includes('<chunk>') && !t.includes('</chunk>'));
    fc.assert(
      fc.property(plain, fc.string({ minLength: 1, maxLength: 3 }), (original, extra) => {
        const chunks = splitParagraphs(original);
        fc.pre(chunks.length > 0);
        const gaps = chunkGaps(original, chunks);
        let tagged = gaps[0];
        chunks.forEach((c, i) => {
          tagged += `<chunk>${c.text}</chunk>${gaps[i + 1]}`;
        });
        const good = validateSelfSegmentation(original, tagged);
        expect(good.accepted).toBe(true);
        expect(good.chunks).toEqual(chunks);

        const edited = validateSelfSegmentation(original, `${tagged}<chunk>${extra}</chunk>`);
        expect(edited.accepted).toBe(false);
        expect(edited.reason).toMatch(/first difference at character/);
        expectExactSpans(original, edited.chunks);
      }),
      { numRuns: 300 },
    );
  });
});
