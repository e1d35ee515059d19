import { describe, expect, it } from 'vitest';
import {
  chunkGaps,
  parseChunkTags,
  rebuildText,
  segment,
  splitParagraphs,
  splitSteps,
  validateSelfSegmentation,
} from '../../src/core/segment.js';

describe('segmentation', () => {
  it('paragraphs keep exact spans', () => {
    const text = 'First step.\n\nSecond\nstill second.\n \n\nThird.';
    const chunks = splitParagraphs(text);
    expect(chunks.map((c) => c.text)).toEqual(['First step.', 'Second\nstill second.', 'Third.']);
    for (const c of chunks) expect(text.slice(c.span.start, c.span.end)).toBe(c.text);
    expect(rebuildText(chunks, chunkGaps(text, chunks))).toBe(text);
  });

  it('Step k markers', () => {
    const chunks = splitSteps('Intro\nStep 1: a\nStep 2: b\nmore b\nStep 3. c');
    expect(chunks.map((c) => c.text)).toEqual(['Intro', 'Step 1: a', 'Step 2: b\nmore b', 'Step 3. c']);
  });

  it('chunk tags: spans index the tag-free text', () => {
    const parsed = parseChunkTags('<chunk>a b</chunk>\n<chunk>c</chunk>');
    expect(parsed.text).toBe('a b\nc');
    expect(parsed.problem).toBeUndefined();
    expect(parsed.chunks.map((c) => parsed.text.slice(c.span.start, c.span.end))).toEqual(['a b', 'c']);
  });

  it('self-segmentation is accepted only when tags strip back exactly', () => {
    const original = 'Let x = 2.\n\nThen 2x = 4.';
    const good = validateSelfSegmentation(
      original,
      '<chunk>Let x = 2.</chunk>\n\n<chunk>Then 2x = 4.</chunk>',
    );
    expect(good.accepted).toBe(true);
    expect(good.chunks).toHaveLength(2);
    const bad = validateSelfSegmentation(
      original,
      '<chunk>Let x = 2.</chunk>\n\n<chunk>Then 2x = 5.</chunk>',
    );
    expect(bad.accepted).toBe(false);
    expect(bad.reason).toMatch(/strip back/);
    expect(bad.chunks.map((c) => c.text)).toEqual(['Let x = 2.', 'Then 2x = 4.']);
  });

  it('lines keep indentation', () => {
    expect(segment('def f():\n    return 1\n\n', 'lines').map((c) => c.text)).toEqual([
      'def f():',
      '    return 1',
    ]);
  });
});
