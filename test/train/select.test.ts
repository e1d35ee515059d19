import { describe, expect, it } from 'vitest';
import { emptyCost } from '../../src/core/cost.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import type { StepJudge } from '../../src/judge/types.js';
import { selectByJudge } from '../../src/train/select.js';
import { scriptedModel } from '../support/scripted-model.js';

/** A scripted judge: a chunk's score is the number written in it as `score=0.x`. */
const judged: string[][] = [];
const judge: StepJudge = {
  name: 'scripted',
  scalar: true,
  async judge(_p, chunks) {
    judged.push([...chunks]);
    const judgments = chunks.map((c, i) => {
      const score = Number(/score=([\d.]+)/.exec(c)?.[1] ?? 0);
      return { chunkIndex: i, verdict: score >= 0.5 ? ('positive' as const) : ('negative' as const), score };
    });
    return { judgments, firstError: -1, cost: emptyCost(), formatFailures: 0 };
  },
};

const sol = (scores: number[], correct: boolean) => ({
  text: scores.map((s) => `step score=${s}`).join('\n\n'),
  correct,
});

describe('judge-based data selection', () => {
  it('picks, for every problem, the correct response with the highest mean chunk score', async () => {
    const inputs = [
      {
        id: 'p1',
        question: 'Q1',
        samples: [sol([0.9, 0.1], true), sol([0.6, 0.6], true), sol([1, 1], false)],
      },
      {
        id: 'p2',
        question: 'Q2',
        samples: [sol([0.2], false), sol([0.3, 0.4, 0.2], true), sol([0.31, 0.4, 0.2], true)],
      },
      { id: 'p3', question: 'Q3', samples: [sol([0.9], false)] },
      { id: 'p4', question: 'Q4', samples: [sol([0.5, 0.5], true), sol([0.9, 0.1], true)] },
    ];
    judged.length = 0;
    const rows = await selectByJudge(inputs, judge, { seed: 1 });
    expect(rows.map((r) => r.chosen?.index ?? null)).toEqual([1, 2, null, 0]); // p4: a tie goes to the earlier response
    expect(rows[0].chosen?.meanScore).toBeCloseTo(0.6);
    // Incorrect responses are never judged.
    expect(judged.some((chunks) => chunks.includes('step score=1'))).toBe(false);
    for (const r of rows) {
      if (r.outcomeOnly)
        expect(inputs.find((p) => p.id === r.id)!.samples[r.outcomeOnly.index].correct).toBe(true);
    }
    expect(rows[2].outcomeOnly).toBeNull();
  });

  it('shows each response to the judge in its own segmentation: tags-segmented samples as <chunk> tags, not [Step i]', async () => {
    const model = scriptedModel(() => [{ text: 'Fine. \\boxed{Positive}' }]);
    const generative = createGenerativeJudge(model);
    const tagged = {
      text: '<chunk>16×3=48</chunk>\n<chunk>48+2=50 \\boxed{50}</chunk>',
      correct: true,
      segmentation: 'tags' as const,
      chunks: ['16×3=48', '48+2=50 \\boxed{50}'],
    };
    const plain = { text: '16×3=48\n\n48+2=50 \\boxed{50}', correct: true };
    const [row] = await selectByJudge([{ id: 'p', question: 'Q', samples: [tagged, plain] }], generative);
    expect(row.chosen?.index).toBe(0);
    const prompts = model.requests.map((r) => JSON.stringify(r.messages));
    // Second chunk of each response: its history is shown in the response's own segmentation.
    const withHistory = prompts.filter((t) => t.includes('16×3=48') && t.includes('48+2=50'));
    expect(withHistory).toHaveLength(2);
    expect(withHistory.filter((t) => t.includes('<chunk>16×3=48</chunk>'))).toHaveLength(1);
    expect(withHistory.filter((t) => t.includes('[Step 1]'))).toHaveLength(1);
  });
});
