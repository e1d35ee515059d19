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
      settings: {},
    });
    expect(parseJudgeSpec('generative:sim?sens=0.9&votes=4&spec=0.8&threshold=0.6')).toEqual({
      kind: 'generative',
      model: 'sim?sens=0.9&spec=0.8',
      settings: { votes: 4, threshold: 0.6 },
    });
    expect(parseJudgeSpec('sim:critic?critic_accuracy=0.7&maxTokens=99')).toEqual({
      kind: 'critic',
      model: 'sim?critic_accuracy=0.7',
      settings: { maxTokens: 99 },
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
    // The query is checked against the kind's settings schema, naming the key.
    expect(() => parseJudgeSpec('critic:sim?top_p=1.5')).toThrow(
      'judge option top_p=1.5 must be a number between 0 and 1 (got 1.5)',
    );
    expect(() => parseJudgeSpec('shepherd:openai:x?method=guess')).toThrow(
      'judge option method=guess must be logprobs or score',
    );
    expect(() => parseJudgeSpec('rollout:openai:x?signal=bogus')).toThrow(
      /judge option signal=bogus must be abs-q/,
    );
    // A setting of another kind is refused, not silently dropped.
    expect(() => parseJudgeSpec('prm:openai:x?votes=4')).toThrow(
      'judge spec "prm:openai:x?votes=4": votes is not a setting of a prm judge (its settings: threshold, concurrency)',
    );
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
      /judge option votes=0 must be a positive integer/,
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

describe('rollout judge: Q̂(H) of a finished solution is its exact check, as in labels', () => {
  it('judges the last chunk of a solution with a final answer by checking it, not by rollouts', async () => {
    // Every rollout writes the wrong answer 8: rolled out, Q̂ of any prefix is 0.
    const model = scriptedModel((req) => Array.from({ length: req.n ?? 1 }, () => ({ text: '\\boxed{8}' })));
    const solved = ['2+3 = 5.', '5+4 = 9.', 'The answer is \\boxed{9}.'];
    const judge = createRolloutJudge(model, { rollouts: 4 });
    const r = await judge.judge(problem, solved, { only: [2] });
    expect(r.judgments[0]).toMatchObject({ chunkIndex: 2, verdict: 'positive', score: 1 });
    expect(model.requests).toHaveLength(0);
    const wrong = await judge.judge(problem, chunks, { only: [2] });
    expect(wrong.judgments[0]).toMatchObject({ verdict: 'negative', score: 0 });
    // A prefix without a final answer (a search's partial path) is still rolled out.
    const partial = await judge.judge(problem, solved.slice(0, 2), { only: [1] });
    expect(partial.judgments[0].verdict).toBe('negative');
    expect(model.requests).toHaveLength(1);
  });
});

describe('rollout judge follows the signal it is given', () => {
  // Q̂ by prefix length (0 = the bare problem): the rollouts from a prefix of L chunks reach the
  // gold answer in the share Q[L] (rollout k is correct iff k < Q[L]·M).
  const Q = [1, 0.75, 0.5, 0, 0.25, 0.25];
  const five = ['C1 step.', 'C2 step.', 'C3 step.', 'C4 step.', 'C5 step.'];
  const valued = () =>
    scriptedModel((req) => {
      const p = parsePolicyPrompt(req.prompt!)!;
      const length = (p.prefix.match(/C\d/g) ?? []).length;
      const n = req.n ?? 1;
      return Array.from({ length: n }, (_, k) => ({ text: k < Q[length] * n ? '\\boxed{9}' : '\\boxed{8}' }));
    });
  const verdicts = (r: { judgments: Array<{ verdict: string }> }) =>
    r.judgments.map((j) => (j.verdict === 'positive' ? '+' : '-')).join('');

  it('verdicts and scores per signal; a score is at or above the threshold exactly when the verdict is positive', async () => {
    const expected: Record<string, { verdicts: string; scores?: number[] }> = {
      'abs-q': { verdicts: '++-++', scores: [0.75, 0.5, 0, 0.25, 0.25] },
      // Ratios 0.75, 2/3, 0, ∞ (Q̂ rises from 0), 1 against γ = 0.8.
      'rel-ratio': { verdicts: '---++', scores: [0.75, 2 / 3, 0, 1, 1] },
      // Q̂(i) + α·A_μ(i) with α = 0.4, n = 4: 0.748, 0.477, −0.375, 0.523, 0.25.
      'rel-effective': { verdicts: '++-++' },
      // The prefix after chunk 3 still reaches the answer: chunk 3 is positive by propagation.
      sorm: { verdicts: '+++++', scores: [0.75, 0.5, 0.25, 0.25, 0.25] },
      'ms-hard': { verdicts: '++-++' },
    };
    for (const [signal, want] of Object.entries(expected)) {
      const judge = await createJudge(`rollout:openai:x?rollouts=4&signal=${signal}`, { model: valued() });
      const r = await judge.judge(problem, five);
      expect(verdicts(r), signal).toBe(want.verdicts);
      if (want.scores)
        for (const [i, j] of r.judgments.entries())
          expect(j.score, `${signal} chunk ${i}`).toBeCloseTo(want.scores[i], 9);
      for (const j of r.judgments)
        expect(j.score >= judge.threshold!, `${signal} chunk ${j.chunkIndex}`).toBe(j.verdict === 'positive');
    }
    // Rel-Effective's score is its effective reward mapped onto [0, 1], not Q̂.
    const eff = await createJudge('rollout:openai:x?rollouts=4&signal=rel-effective', { model: valued() });
    const r = await eff.judge(problem, five);
    const qmu = (q: number) => 1 - (1 - q) ** 4;
    const v = (i: number) => Q[i + 1] + 0.4 * (qmu(Q[i + 1]) - qmu(Q[i]));
    for (const [i, j] of r.judgments.entries()) expect(j.score).toBeCloseTo((v(i) + 0.4) / 1.8, 9);
  });

  it('ms-soft uses the soft threshold it is given; rel-ratio its γ', async () => {
    const soft = await createJudge('rollout:openai:x?rollouts=4&signal=ms-soft&soft_threshold=0.6', {
      model: valued(),
    });
    expect(verdicts(await soft.judge(problem, five))).toBe('+----');
    expect(soft.threshold).toBe(0.6);
    const lenient = await createJudge('rollout:openai:x?rollouts=4&signal=rel-ratio&gamma=0.6', {
      model: valued(),
    });
    expect(verdicts(await lenient.judge(problem, five))).toBe('++-++');
  });

  it('draws the rollouts of the signal’s paper by default: 8 for Math-Shepherd and SORM, 16 for StepWiser signals', async () => {
    for (const [signal, n] of [
      ['sorm', 8],
      ['ms-soft', 8],
      ['abs-q', 16],
      ['rel-ratio', 16],
    ] as const) {
      const model = valued();
      const judge = await createJudge(`rollout:openai:x?signal=${signal}`, { model });
      await judge.judge(problem, five);
      expect(new Set(model.requests.map((q) => q.n)), signal).toEqual(new Set([n]));
    }
  });
});
