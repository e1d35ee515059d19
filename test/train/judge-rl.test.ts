import { describe, expect, it } from 'vitest';
import { parseJudgePrompt, renderJudgeMessages } from '../../src/prompts/judge.js';
import { buildJudgeRlSet, estimateTokens } from '../../src/train/judge-rl.js';
import { labeledFixture } from './fixtures.js';

describe('judge RL set', () => {
  // 30 solutions × 4 chunks; a third have an error at chunk 1 → 90 + 20 positives, 30 − 20... counted below.
  const rows = labeledFixture(30, (s) => (s % 3 === 0 ? 1 : -1));

  it('is exactly 50/50 and each prompt holds the problem, the history and the chunk', () => {
    const set = buildJudgeRlSet(rows, { signal: 'abs-q', seed: 7 });
    const pos = set.examples.filter((e) => e.label === 'Positive').length;
    const neg = set.examples.filter((e) => e.label === 'Negative').length;
    expect(set.stats.negativesBefore).toBe(30); // 10 solutions × 3 chunks from the error on
    expect(set.stats.positivesBefore).toBe(90);
    expect(pos).toBe(30);
    expect(neg).toBe(30);
    for (const e of set.examples) {
      const row = rows.find((r) => r.id === e.solutionId)!;
      const parsed = parseJudgePrompt(e.prompt);
      expect(parsed).not.toBeNull();
      expect(parsed!.problem).toBe(row.problem);
      expect(parsed!.history).toEqual(row.chunks.slice(0, e.chunkIndex).map((c) => c.text));
      expect(parsed!.chunk).toBe(row.chunks[e.chunkIndex].text);
      expect(e.label === 'Positive').toBe(row.chunks[e.chunkIndex].labels['abs-q']);
    }
  });

  it('down-sampling is seeded: same seed, same set; another seed, another set', () => {
    const a = buildJudgeRlSet(rows, { signal: 'abs-q', seed: 1 }).examples.map((e) => e.id);
    const b = buildJudgeRlSet(rows, { signal: 'abs-q', seed: 1 }).examples.map((e) => e.id);
    const c = buildJudgeRlSet(rows, { signal: 'abs-q', seed: 2 }).examples.map((e) => e.id);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('the length filter drops long prompts and counts them', () => {
    const set = buildJudgeRlSet(rows, { signal: 'abs-q', maxPromptTokens: 150, balance: false });
    expect(set.stats.tooLong).toBeGreaterThan(0);
    for (const e of set.examples)
      expect(estimateTokens(e.prompt.map((m) => m.content).join('\n'))).toBeLessThanOrEqual(150);
  });

  it('soft labels count as positive at ≥ 0.5 and an unknown signal is a usage error', () => {
    const set = buildJudgeRlSet(rows, { signal: 'ms-soft', balance: false });
    expect(set.stats.negativesBefore).toBe(30);
    expect(() => buildJudgeRlSet(rows, { signal: 'nope' })).toThrow(/no chunk has a label for signal "nope"/);
  });

  it('a solution labeled under tags gets the prompt the judge is sent for it: earlier chunks as <chunk>s', () => {
    const tagged = rows.slice(0, 3).map((r) => ({ ...r, segmentation: 'tags' as const }));
    const set = buildJudgeRlSet(tagged, { signal: 'abs-q', balance: false });
    const later = set.examples.filter((e) => e.chunkIndex > 0);
    expect(later.length).toBeGreaterThan(0);
    for (const e of later) {
      const row = tagged.find((r) => r.id === e.solutionId)!;
      const texts = row.chunks.map((c) => c.text);
      expect(e.prompt).toEqual(
        renderJudgeMessages({
          problem: row.problem,
          history: texts.slice(0, e.chunkIndex),
          chunk: texts[e.chunkIndex],
          segmentation: 'tags',
        }),
      );
      expect(e.prompt[1].content).toContain(`<chunk>${texts[0]}</chunk>`);
      expect(e.prompt[1].content).not.toContain('[Step 1]');
      expect(parseJudgePrompt(e.prompt)?.segmentation).toBe('tags');
    }
  });
});
