import { describe, expect, it } from 'vitest';
import { alignTaggedRewrite, parseWrittenTags, splitWritten } from '../../src/core/segment.js';
import type { Problem } from '../../src/core/types.js';
import { solutionPrefix } from '../../src/label/label.js';
import { createPolicy } from '../../src/models/policy.js';
import { sampleProblem, summarizeSamples } from '../../src/sample/sample.js';
import { segmentWithLlm } from '../../src/segment/llm.js';
import { scriptedModel } from '../support/scripted-model.js';

const problem: Problem = { id: 'p', question: 'What is 3 + 4?', answer: '7', domain: 'math', source: 'test' };

describe('tags: parsing what the policy wrote', () => {
  it('spans index the written text; each prefix ends right after its </chunk>', () => {
    const written = '<chunk>We add.</chunk>\n<chunk> 3 + 4 = 7, so \\boxed{7}. </chunk>\n';
    const w = splitWritten(written, 'tags');
    expect(w.method).toBe('tags');
    expect(w.chunks.map((c) => c.text)).toEqual(['We add.', '3 + 4 = 7, so \\boxed{7}.']);
    for (const c of w.chunks) expect(written.slice(c.span.start, c.span.end)).toBe(c.text);
    for (const e of w.ends) expect(written.slice(0, e).endsWith('</chunk>')).toBe(true);
    const s = {
      id: 's',
      problem,
      chunks: w.chunks.map((c) => c.text),
      written: { text: written, ends: w.ends },
    };
    expect(solutionPrefix(s, 1, 'tags')).toBe('<chunk>We add.</chunk>');
    expect(solutionPrefix({ id: 's', problem, chunks: ['a', 'b'] }, 2, 'tags')).toBe(
      '<chunk>a</chunk>\n<chunk>b</chunk>',
    );
  });

  it('malformed tags are named and fall back to the paragraphs of the tag-free text', () => {
    for (const [text, problemText] of [
      ['<chunk>a</chunk> stray', 'text outside'],
      ['<chunk>a<chunk>b</chunk>', 'nested'],
      ['<chunk>a', 'unclosed'],
      ['no tags at all', 'text outside'],
      ['  ', 'no <chunk> tags'],
    ] as const) {
      const w = splitWritten(text, 'tags');
      expect(w.method).toBe('paragraph');
      expect(w.problem).toContain(problemText);
    }
    expect(parseWrittenTags('</chunk>').problem).toContain('without <chunk>');
  });
});

describe('sample --segmentation tags', () => {
  it('keeps the tagged text, splits on its chunks, gives broken tags a status and counts them', async () => {
    const model = scriptedModel(() => [
      { text: '<chunk>3 + 4 = 7.</chunk>\n<chunk>So \\boxed{7}.</chunk>' },
      { text: '<chunk>3 + 4 = 7.\n\nSo \\boxed{7}.' },
    ]);
    const policy = createPolicy(model, { segmentation: 'tags' });
    const r = await sampleProblem(problem, { policy, n: 2 });
    expect(String(model.requests[0].prompt)).toContain('<chunk> and </chunk>');
    expect(r.segmentation).toBe('tags');
    const [good, broken] = r.samples;
    expect(good.segmentation).toBe('tags');
    expect(good.chunks.map((c) => c.text)).toEqual(['3 + 4 = 7.', 'So \\boxed{7}.']);
    expect(broken.segmentation).toBe('paragraph');
    expect(broken.tagProblem).toBe('unclosed <chunk>');
    expect(broken.written).toBe('<chunk>3 + 4 = 7.\n\nSo \\boxed{7}.');
    expect(broken.text).toBe('3 + 4 = 7.\n\nSo \\boxed{7}.');
    expect(broken.chunks.map((c) => c.text)).toEqual(['3 + 4 = 7.', 'So \\boxed{7}.']);
    expect(r.samples.every((s) => s.correct)).toBe(true);
    expect(summarizeSamples([r]).brokenTags).toBe(1);
  });
});

describe('LLM segmenter acceptance', () => {
  const original = 'First, 2 + 2 = 4.\n\nThen 4 × 3 = 12. The answer is 12.';

  it('whitespace between chunks may differ; anything else may not', () => {
    const ok = alignTaggedRewrite(
      original,
      '<chunk>First, 2 + 2 = 4.</chunk>\n<chunk>Then 4 × 3 = 12.</chunk>\n<chunk>The answer is 12.</chunk>',
    );
    expect(ok.problem).toBeUndefined();
    for (const c of ok.chunks) expect(original.slice(c.span.start, c.span.end)).toBe(c.text);
    // Exact: the newline replacing the blank line and the space is refused.
    expect(
      alignTaggedRewrite(
        original,
        '<chunk>First, 2 + 2 = 4.</chunk>\n<chunk>Then 4 × 3 = 12.</chunk>\n<chunk>The answer is 12.</chunk>',
        'exact',
      ).problem,
    ).toContain('first difference');
    expect(
      alignTaggedRewrite(original, '<chunk>First, 2 + 2 = 4.\n\nThen 4 × 3 = 13. The answer is 12.</chunk>')
        .problem,
    ).toContain('differs');
    expect(alignTaggedRewrite(original, '<chunk>First, 2 + 2 = 4.</chunk>').problem).toContain('leaves out');
    expect(
      alignTaggedRewrite(original, '<chunk>First,2 + 2 = 4.\n\nThen 4 × 3 = 12. The answer is 12.</chunk>')
        .problem,
    ).toBeDefined();
  });

  it('retries rejected replies, then falls back to paragraphs and says so', async () => {
    const model = scriptedModel(() => [{ text: '<chunk>First, 2 + 2 = 5.</chunk>' }]);
    const r = await segmentWithLlm(model, original, { attempts: 3 });
    expect(r.method).toBe('paragraph');
    expect(r.attempts).toBe(3);
    expect(r.rejected).toHaveLength(3);
    expect(r.chunks.map((c) => c.text)).toEqual(['First, 2 + 2 = 4.', 'Then 4 × 3 = 12. The answer is 12.']);
    // Retries are new samples (another seed, a temperature), not the cached first request.
    expect(new Set(model.requests.map((q) => q.seed)).size).toBe(3);
    expect(model.requests[1].temperature).toBeGreaterThan(0);
  });
});
