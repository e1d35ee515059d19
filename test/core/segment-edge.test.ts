import { describe, expect, it } from 'vitest';
import {
  chunksFromSteps,
  parseChunkTags,
  segment,
  splitParagraphs,
  stripChunkTags,
  validateSelfSegmentation,
} from '../../src/index.js';

describe('segmentation edge cases', () => {
  it('stripping tags is one left-to-right pass (a removed tag must not form a new one)', () => {
    expect(stripChunkTags('</chu<chunk>nk>')).toBe('</chunk>');
    expect(parseChunkTags('</chu<chunk>nk>').text).toBe('</chunk>');
    expect(stripChunkTags('<chunk>a</chunk>\n<chunk>b</chunk>')).toBe('a\nb');
  });

  it('a step that itself contains a blank line becomes two paragraphs; chunksFromSteps keeps step boundaries', () => {
    const steps = ['First part.\n\nStill step one.', 'Step two.'];
    const joined = steps.join('\n\n');
    expect(splitParagraphs(joined).map((c) => c.text)).toEqual([
      'First part.',
      'Still step one.',
      'Step two.',
    ]);
    const exact = chunksFromSteps(steps);
    expect(exact.chunks.map((c) => c.text)).toEqual(steps);
    expect(exact.chunks.map((c) => exact.text.slice(c.span.start, c.span.end))).toEqual(steps);
  });

  it('whitespace-only paragraphs are dropped and blank lines with spaces or \\r separate', () => {
    expect(splitParagraphs('a\r\n\r\nb\n  \t\nc\n\n   \n\n').map((c) => c.text)).toEqual(['a', 'b', 'c']);
    expect(splitParagraphs('   \n\n \n')).toEqual([]);
  });

  it('Step markers: bold and heading forms, case-insensitive, not mid-line', () => {
    const t = 'Intro.\n**Step 1:** a\n## Step 2. b\nstep 3: c and Step 4: inline';
    expect(segment(t, 'steps').map((c) => c.text)).toEqual([
      'Intro.',
      '**Step 1:** a',
      '## Step 2. b',
      'step 3: c and Step 4: inline',
    ]);
    expect(segment('no markers here\n\nat all', 'steps').map((c) => c.text)).toEqual([
      'no markers here\n\nat all',
    ]);
  });

  it('malformed tagging is reported and self-segmentation falls back', () => {
    expect(parseChunkTags('<chunk>a<chunk>b</chunk>').problem).toMatch(/nested/);
    expect(parseChunkTags('a <chunk>b</chunk>').problem).toMatch(/outside/);
    expect(parseChunkTags('<chunk>a').problem).toBe('unclosed <chunk>');
    expect(parseChunkTags('plain').problem).toBe('text outside any <chunk> at character 0');
    expect(parseChunkTags('  \n').problem).toBe('no <chunk> tags');
    const r = validateSelfSegmentation('a\n\nb', '<chunk>a\n\nb');
    expect(r.accepted).toBe(false);
    expect(r.reason).toBe('unclosed <chunk>');
    expect(r.chunks.map((c) => c.text)).toEqual(['a', 'b']);
    const lines = validateSelfSegmentation('x = 1\ny = 2', 'x = 1\ny = 2', 'lines');
    expect(lines.reason).toMatch(/text outside/);
    expect(lines.chunks.map((c) => c.text)).toEqual(['x = 1', 'y = 2']);
  });
});
