import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { createCriticJudge, voteCritic } from '../../src/judge/critic.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { createPoolingPrmJudge, rewardsFromPoolingRows } from '../../src/judge/prm.js';
import { createShepherdJudge, shepherdScoreFromTop } from '../../src/judge/shepherd.js';
import { parseCriticPrompt } from '../../src/prompts/critic.js';
import { parseJudgePrompt } from '../../src/prompts/judge.js';
import { parseQwenPrmInput, SHEPHERD_TAG } from '../../src/prompts/prm.js';
import { scriptedModel } from '../support/scripted-model.js';

const problem: Problem = {
  id: 'p1',
  question: 'What is 2+3+4?',
  answer: '9',
  domain: 'math',
  source: 'test',
};
const chunks = ['2+3 = 5.', '5+4 = 10.', 'So the answer is \\boxed{10}.'];

const pos = { text: 'The step adds correctly. \\boxed{Positive}' };
const neg = { text: 'The sum is wrong. \\boxed{Negative}' };
const junk = { text: 'I think it is fine.' };

describe('generative judge', () => {
  it('sends problem, history and chunk; stops at the first negative with firstErrorOnly', async () => {
    const model = scriptedModel((req) => {
      const p = parseJudgePrompt(req.messages!)!;
      return [p.chunk.includes('10.') && !p.chunk.includes('boxed') ? neg : pos];
    });
    const judge = createGenerativeJudge(model);
    const r = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(r.firstError).toBe(1);
    expect(r.judgments.map((j) => j.verdict)).toEqual(['positive', 'negative']);
    expect(model.requests).toHaveLength(2);
    const second = parseJudgePrompt(model.requests[1].messages!)!;
    expect(second).toEqual({ problem: problem.question, history: [chunks[0]], chunk: chunks[1] });
    expect(r.cost.judge.calls).toBe(2);
    expect(r.cost.policy.calls).toBe(0);
    expect(r.judgments[1].rationale).toContain('wrong');
  });

  it('k votes are one request with n = k; score is Positive votes over k; failures are counted', async () => {
    const model = scriptedModel((req) => {
      expect(req.n).toBe(4);
      return [pos, pos, neg, junk];
    });
    const judge = createGenerativeJudge(model, { votes: 4 });
    const r = await judge.judge(problem, chunks);
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0].temperature).toBe(1);
    for (const j of r.judgments) {
      // maj@k over k: the format failure is a vote that did not say Positive (2 of 4, not 2 of 3).
      expect(j.score).toBe(0.5);
      expect(j.verdict).toBe('positive');
      expect(j.formatFailures).toBe(1);
      expect(j.votes).toBe(4);
    }
    expect(r.formatFailures).toBe(3);
    expect(r.cost.judge.samples).toBe(12);
  });

  it('maj@k is over all k votes: 1 Positive + 7 format failures is negative (1/8), not 1.0', async () => {
    const model = scriptedModel(() => [pos, junk, junk, junk, junk, junk, junk, junk]);
    const r = await createGenerativeJudge(model, { votes: 8 }).judge(problem, chunks, { only: [0] });
    expect(r.judgments[0]).toMatchObject({ score: 1 / 8, verdict: 'negative', formatFailures: 7, votes: 8 });
  });

  it('the 4–4 tie rule: 4 Positive and 4 Negative score 0.5, positive at the default threshold; 3–4–1 is negative', async () => {
    const tie = scriptedModel(() => [pos, neg, pos, neg, pos, neg, pos, neg]);
    const t = await createGenerativeJudge(tie, { votes: 8 }).judge(problem, chunks, { only: [0] });
    expect(t.judgments[0]).toMatchObject({ score: 0.5, verdict: 'positive', formatFailures: 0 });
    const short = scriptedModel(() => [pos, neg, pos, neg, pos, neg, junk, neg]);
    const u = await createGenerativeJudge(short, { votes: 8 }).judge(problem, chunks, { only: [0] });
    expect(u.judgments[0]).toMatchObject({ score: 3 / 8, verdict: 'negative', formatFailures: 1 });
    // A strict threshold turns the tie negative: the tie is decided by `score >= threshold`.
    const strict = await createGenerativeJudge(tie, { votes: 8, threshold: 0.51 }).judge(problem, chunks, {
      only: [0],
    });
    expect(strict.judgments[0].verdict).toBe('negative');
  });

  it('a chunk with only unparsable replies is neutral (0.5), not an error, never a crash', async () => {
    const model = scriptedModel(() => [junk]);
    const r = await createGenerativeJudge(model).judge(problem, chunks, { firstErrorOnly: true });
    expect(r.firstError).toBe(-1);
    expect(r.formatFailures).toBe(3);
    expect(r.judgments.every((j) => j.verdict === 'neutral' && j.score === 0.5)).toBe(true);
  });

  it('judges only the requested chunks', async () => {
    const model = scriptedModel(() => [pos]);
    const r = await createGenerativeJudge(model).judge(problem, chunks, { only: [2] });
    expect(r.judgments.map((j) => j.chunkIndex)).toEqual([2]);
    expect(parseJudgePrompt(model.requests[0].messages!)!.history).toEqual(chunks.slice(0, 2));
  });
});

describe('critic', () => {
  it('maj@k with ties to the first answer seen; out-of-range answers are failures', () => {
    const s = (t: string) => ({ text: t, finishReason: 'stop' as const, completionTokens: 1 });
    const v = voteCritic(
      [s('\\boxed{2}'), s('\\boxed{1}'), s('\\boxed{1}'), s('\\boxed{2}'), s('\\boxed{9}'), s('x')],
      3,
    );
    expect(v.firstError).toBe(2);
    expect(v.failures).toBe(2);
    expect(voteCritic([s('nothing')], 3)).toMatchObject({ abstained: true, firstError: -1 });
  });

  it('one request with n = k at T = 1, top-p 0.9; per-chunk scores from the votes', async () => {
    const model = scriptedModel(() => [
      { text: '\\boxed{1}' },
      { text: '\\boxed{1}' },
      { text: '\\boxed{-1}' },
      { text: 'no' },
    ]);
    const judge = createCriticJudge(model, { votes: 4 });
    const r = await judge.judge(problem, chunks);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({ n: 4, temperature: 1, topP: 0.9 });
    expect(parseCriticPrompt(model.requests[0].messages!)).toEqual({
      problem: problem.question,
      steps: chunks,
    });
    expect(r.firstError).toBe(1);
    expect(r.formatFailures).toBe(1);
    expect(r.judgments.map((j) => j.verdict)).toEqual(['positive', 'negative', 'neutral']);
    // Shares of all k = 4 samples: the format failure does not vote "no error here".
    expect(r.judgments[0].score).toBe(3 / 4);
    expect(r.judgments[1].score).toBe(1 / 4);
    expect(r.solutionScore).toBe(1 / 4);
    const early = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(early.judgments).toHaveLength(2);
  });

  it('abstains when no sample answers', async () => {
    const r = await createCriticJudge(
      scriptedModel(() => [{ text: '?' }]),
      { votes: 1 },
    ).judge(problem, chunks);
    expect(r.abstained).toBe(true);
    expect(r.firstError).toBe(-1);
    expect(r.formatFailures).toBe(1);
  });
});

describe('pooling PRM', () => {
  it('maps p_pos rows to chunks in order and checks the row count', async () => {
    const inputs: string[] = [];
    const model = scriptedModel(() => [], {
      capabilities: { pooling: true },
      async pool(input: string) {
        inputs.push(input);
        return {
          data: [
            [0.1, 0.9],
            [0.7, 0.3],
            [0.4, 0.6],
          ],
          usage: { calls: 1, promptTokens: 50, completionTokens: 0 },
        };
      },
    });
    const judge = createPoolingPrmJudge(model);
    expect(judge.scalar).toBe(true);
    const r = await judge.judge(problem, chunks);
    expect(parseQwenPrmInput(inputs[0])).toEqual({ problem: problem.question, steps: chunks });
    expect(r.judgments.map((j) => j.score)).toEqual([0.9, 0.3, 0.6]);
    expect(r.firstError).toBe(1);
    expect(r.cost.judge).toMatchObject({ calls: 1, promptTokens: 50 });
    expect(() => rewardsFromPoolingRows([[0.1, 0.9]], 3, 'm')).toThrow(/1 reward rows for 3 steps/);
    expect(() => rewardsFromPoolingRows([[0.9]], 1, 'm')).toThrow(/expected two class probabilities/);
  });

  it('says what is missing when the model has no /pooling', async () => {
    await expect(createPoolingPrmJudge(scriptedModel(() => [])).judge(problem, chunks)).rejects.toThrow(
      /no \/pooling/,
    );
  });
});

describe('Math-Shepherd PRM', () => {
  it('P(+) against P(-) from the top alternatives', () => {
    expect(
      shepherdScoreFromTop([
        { token: ' +', logprob: Math.log(0.6) },
        { token: '-', logprob: Math.log(0.2) },
      ]),
    ).toBeCloseTo(0.75, 12);
    expect(shepherdScoreFromTop([{ token: '+', logprob: -0.1 }])).toBe(1);
    expect(shepherdScoreFromTop([{ token: 'x', logprob: -0.1 }])).toBeNull();
  });

  it('one one-token request per step ending at its tag', async () => {
    const model = scriptedModel((req) => {
      const steps = req.prompt!.split(SHEPHERD_TAG).length - 1;
      const p = steps === 2 ? 0.1 : 0.9;
      return [
        {
          text: '+',
          logprobs: [
            {
              token: '+',
              logprob: Math.log(p),
              top: [
                { token: '+', logprob: Math.log(p) },
                { token: '-', logprob: Math.log(1 - p) },
              ],
            },
          ],
        },
      ];
    });
    const r = await createShepherdJudge(model).judge(problem, chunks, { firstErrorOnly: true });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1].prompt!.endsWith(`Step 2: ${chunks[1]} ${SHEPHERD_TAG}`)).toBe(true);
    expect(model.requests[1]).toMatchObject({ maxTokens: 1, temperature: 0, logprobs: 20 });
    expect(r.judgments[0].score).toBeCloseTo(0.9, 12);
    expect(r.firstError).toBe(1);
  });
});
