import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { createJudge } from '../../src/judge/create.js';
import { createOrmJudge } from '../../src/judge/orm.js';
import { createRolloutJudge } from '../../src/judge/rollout.js';
import { parseJudgeSpec } from '../../src/judge/spec.js';
import { parseOrmPrompt } from '../../src/prompts/orm.js';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';
import { scriptedModel } from '../support/scripted-model.js';

describe('parseJudgeSpec', () => {
  it('splits kind, model spec and judge options', () => {
    expect(parseJudgeSpec('generative:openai:Qwen2.5-7B-Instruct')).toEqual({
      kind: 'generative',
      model: 'openai:Qwen2.5-7B-Instruct',
      options: {},
    });
    expect(parseJudgeSpec('generative:sim?sens=0.9&votes=4&spec=0.8&threshold=0.6')).toEqual({
      kind: 'generative',
      model: 'sim?sens=0.9&spec=0.8',
      options: { votes: '4', threshold: '0.6' },
    });
    expect(parseJudgeSpec('sim:critic?critic_accuracy=0.7&maxTokens=99')).toEqual({
      kind: 'critic',
      model: 'sim?critic_accuracy=0.7',
      options: { max_tokens: '99' },
    });
    expect(parseJudgeSpec('prm:openai:Qwen/Qwen2.5-Math-PRM-7B').model).toBe(
      'openai:Qwen/Qwen2.5-Math-PRM-7B',
    );
  });

  it('names what is wrong', () => {
    expect(() => parseJudgeSpec('openai')).toThrow(/no kind/);
    expect(() => parseJudgeSpec('magic:openai:x')).toThrow(/unknown kind "magic"/);
    expect(() => parseJudgeSpec('critic:')).toThrow(/no model spec/);
    expect(() => parseJudgeSpec('sim:nothing')).toThrow(/needs a kind/);
  });
});

describe('createJudge', () => {
  it('builds each kind over a given model; flags beat spec options', async () => {
    const model = scriptedModel(() => [{ text: '\\boxed{Positive}' }]);
    const g = await createJudge('generative:openai:x?votes=3', { model });
    expect(g.name).toBe('generative:openai:x?votes=3');
    expect(g.scalar).toBe(false);
    await g.judge({ id: 'a', question: 'Q', answer: '1', domain: 'math', source: 't' }, ['one']);
    expect(model.requests[0].n).toBe(3);
    const g2 = await createJudge('generative:openai:x?votes=3', { model, votes: 2 });
    await g2.judge({ id: 'a', question: 'Q', answer: '1', domain: 'math', source: 't' }, ['one']);
    expect(model.requests[1].n).toBe(2);
    expect((await createJudge('prm:openai:x', { model })).scalar).toBe(true);
    expect((await createJudge('shepherd:openai:x', { model })).scalar).toBe(true);
    expect((await createJudge('critic:openai:x', { model })).scalar).toBe(false);
    expect((await createJudge('rollout:openai:x?rollouts=4', { model })).scalar).toBe(true);
    expect((await createJudge('orm:openai:x', { model })).scalar).toBe(false);
    await expect(createJudge('generative:openai:x?votes=0', { model })).rejects.toThrow(
      /votes=0 must be an integer ≥ 1/,
    );
    await expect(createJudge('rollout:openai:x?signal=bogus', { model })).rejects.toThrow(/signal=bogus/);
  });
});

const problem: Problem = { id: 'p', question: 'What is 2+3+4?', answer: '9', domain: 'math', source: 'test' };
const chunks = ['2+3 = 5.', '5+4 = 10.', 'The answer is \\boxed{10}.'];

describe('outcome model', () => {
  it('one verdict on the whole solution, on the last chunk', async () => {
    const model = scriptedModel(() => [{ text: 'Wrong sum. \\boxed{Incorrect}' }]);
    const r = await createOrmJudge(model).judge(problem, chunks);
    expect(parseOrmPrompt(model.requests[0].messages!)).toEqual({
      problem: problem.question,
      solution: chunks.join('\n\n'),
    });
    expect(r.judgments).toHaveLength(1);
    expect(r.judgments[0]).toMatchObject({ chunkIndex: 2, verdict: 'negative', score: 0 });
    expect(r.solutionScore).toBe(0);
    expect(r.firstError).toBe(2);
  });

  it('with only, judges partial solutions as values', async () => {
    const model = scriptedModel((req) => [
      {
        text: parseOrmPrompt(req.messages!)!.solution.includes('10')
          ? '\\boxed{Incorrect}'
          : '\\boxed{Correct}',
      },
    ]);
    const r = await createOrmJudge(model).judge(problem, chunks, { only: [0, 1] });
    expect(r.judgments.map((j) => j.verdict)).toEqual(['positive', 'negative']);
    expect(r.solutionScore).toBeUndefined();
  });
});

describe('rollout judge', () => {
  it('scores each chunk by Q̂ of its prefix and stops at the first Q̂ = 0', async () => {
    // Continuations reach 9 unless the prefix already holds the wrong sum 10.
    const model = scriptedModel((req) => {
      const p = parsePolicyPrompt(req.prompt!)!;
      const wrong = p.prefix.includes('= 10');
      return Array.from({ length: req.n ?? 1 }, (_, k) => ({
        text: wrong ? 'So \\boxed{10}.' : k % 2 === 0 ? '5+4 = 9. \\boxed{9}' : '\\boxed{8}',
      }));
    });
    const judge = createRolloutJudge(model, { rollouts: 4 });
    const r = await judge.judge(problem, chunks, { firstErrorOnly: true });
    expect(r.judgments.map((j) => j.score)).toEqual([0.5, 0]);
    expect(r.firstError).toBe(1);
    expect(model.requests.every((q) => q.n === 4)).toBe(true);
    expect(model.requests).toHaveLength(2);
    expect(r.cost.judge.samples).toBe(8);
    await expect(judge.judge({ ...problem, answer: '' }, chunks)).rejects.toThrow(/no gold answer/);
  });
});
