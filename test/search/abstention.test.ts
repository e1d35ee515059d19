import { describe, expect, it } from 'vitest';
import { emptyCost } from '../../src/core/cost.js';
import type { Judgment } from '../../src/core/types.js';
import type { JudgeOptions, JudgeResult, StepJudge } from '../../src/judge/types.js';
import { runStrategy } from '../../src/search/registry.js';
import { boxedChecker as checker, fakePolicy, fakeProblem } from './fakes.js';

/**
 * One abstention rule for every search consumer (docs/search.md, "Abstentions"): a chunk the judge
 * said nothing about (every vote a format failure) is never taken as approval and never outranks a
 * judged attempt. This judge abstains on chunks containing `odd`, calls `bad` negative (0.2) and
 * `meh` negative (0.4), everything else positive (0.9).
 */
function abstainingJudge(): StepJudge {
  return {
    name: 'abstaining',
    scalar: false,
    async judge(_problem, chunks, options: JudgeOptions = {}): Promise<JudgeResult> {
      const judgments: Judgment[] = (options.only ?? chunks.map((_, i) => i)).map((i) => {
        const c = chunks[i];
        if (c.includes('odd'))
          return { chunkIndex: i, verdict: 'neutral', score: 0.5, formatFailures: 1, votes: 1 };
        if (c.includes('bad')) return { chunkIndex: i, verdict: 'negative', score: 0.2, votes: 1 };
        if (c.includes('meh')) return { chunkIndex: i, verdict: 'negative', score: 0.4, votes: 1 };
        return { chunkIndex: i, verdict: 'positive', score: 0.9, votes: 1 };
      });
      const cost = emptyCost();
      cost.judge = { calls: 1, samples: judgments.length, promptTokens: 1, completionTokens: 1 };
      const formatFailures = judgments.reduce((s, j) => s + (j.formatFailures ?? 0), 0);
      const firstError = judgments.find((j) => j.verdict === 'negative')?.chunkIndex ?? -1;
      return { judgments, firstError, cost, formatFailures };
    },
  };
}

/** A policy whose first step alternates `odd` (abstained) and `bad` (negative) attempts. */
function alternatingFirstStep() {
  let k = 0;
  return fakePolicy({
    step: (i) => (i === 0 ? `step 1 ${k++ % 2 === 0 ? 'odd' : 'bad'}` : `step ${i + 1} ok`),
  });
}

describe('abstentions: one rule for chunk-reset, greedy-prm and best-of-N', () => {
  const problem = fakeProblem('p1', 4);

  it('chunk-reset: an abstained attempt is regenerated, and the fallback keeps a judged attempt over it', async () => {
    const { policy } = alternatingFirstStep();
    const r = await runStrategy(
      'chunk-reset',
      problem,
      { maxAttempts: 5 },
      { policy, judge: abstainingJudge(), checker },
    );
    expect(r.stats).toMatchObject({ fallbacks: 1, abstentions: 3 });
    const kept = r.trace.find((n) => n.status === 'fallback')!;
    // Before the rule the abstention (shown as 0.5) beat the negatives (0.2): 106 of 108 fallbacks.
    expect(kept.text).toContain('bad');
    expect(kept.abstained).toBeUndefined();
    expect(r.trace.filter((n) => n.abstained).every((n) => n.status === 'rejected' && n.score === 0)).toBe(
      true,
    );
  });

  it('greedy-prm: an abstained child is not accepted as a neutral one', async () => {
    const { policy } = alternatingFirstStep();
    const r = await runStrategy(
      'greedy-prm',
      problem,
      { childrenPerNode: 3, maxBacktracks: 0 },
      { policy, judge: abstainingJudge(), checker },
    );
    const first = r.trace.filter((n) => n.depth === 0);
    expect(first.map((n) => n.text)).toEqual(['step 1 odd', 'step 1 bad', 'step 1 odd']);
    expect(first.filter((n) => n.abstained).every((n) => n.status === 'rejected')).toBe(true);
    expect(r.chunks[0].text).toBe('step 1 bad');
    expect(first.find((n) => n.text === 'step 1 bad')?.status).toBe('fallback');
  });

  it('best-of-N: an abstained step scores 0, below a judged negative step', async () => {
    let m = 0;
    const { policy } = fakePolicy({
      step: (i) => (i === 3 ? `step 4 ${m++ === 0 ? 'meh' : 'odd'}` : `step ${i + 1} ok`),
    });
    const r = await runStrategy(
      'best-of-n',
      problem,
      { n: 2, aggregation: 'last' },
      { policy, judge: abstainingJudge(), checker },
    );
    // Candidate 1's last step was abstained on: it used to score 0.5 and beat candidate 0's 0.4.
    expect(r.stats.chosen).toBe(0);
    expect(r.finalText).toContain('meh');
    expect(r.trace.map((n) => n.score)).toEqual([0.4, 0]);
  });
});
