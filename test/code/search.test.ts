import { afterAll, describe, expect, it } from 'vitest';
import { createCodePolicy } from '../../src/code/policy.js';
import {
  aggregateStepScores,
  codeBestOfN,
  codeGreedySearch,
  verifyCodeSearchResult,
} from '../../src/code/search.js';
import { emptyCost } from '../../src/core/cost.js';
import type { Problem } from '../../src/core/types.js';
import type { JudgeResult, StepJudge } from '../../src/judge/types.js';
import { parseCodePolicyPrompt, renderCodePolicyPrompt } from '../../src/prompts/code.js';
import { Sandbox } from '../../src/verify/code/sandbox.js';
import { scriptedModel } from '../support/scripted-model.js';

const sandbox = new Sandbox({ limits: { timeoutMs: 10_000, programTimeoutMs: 10_000 } });
afterAll(() => sandbox.close());

const problem: Problem = {
  id: 'toy/add',
  question: 'Write a function to add two numbers.',
  answer: 'assert add(1, 2) == 3\nassert add(-1, 1) == 0',
  domain: 'code',
  source: 'mbpp',
  meta: { test_list: ['assert add(1, 2) == 3', 'assert add(-1, 1) == 0'], test_setup_code: '' },
};

/** A scripted in-process model: for each code prefix, the next texts to return, in order (the last repeats). */
function scriptedCodeModel(script: Record<string, string[]>) {
  const served = new Map<string, number>();
  return scriptedModel(
    (request) => {
      const parsed = parseCodePolicyPrompt(request.prompt ?? request.messages ?? '');
      if (!parsed) throw new Error('not a code policy prompt');
      const options = script[parsed.prefix];
      if (!options) throw new Error(`no script for prefix ${JSON.stringify(parsed.prefix)}`);
      return Array.from({ length: request.n ?? 1 }, () => {
        const k = served.get(parsed.prefix) ?? 0;
        served.set(parsed.prefix, k + 1);
        const text = options[Math.min(k, options.length - 1)];
        const end = text === '```';
        return { text: end ? '' : text, stopReason: end ? '```' : '\n\n', completionTokens: text.length };
      });
    },
    { provider: 'scripted', modelId: 'scripted-code', capabilities: { logprobs: false } },
  );
}

/** A judge that calls a block bad when it says BUG, so-so when it says MEH. */
const judge: StepJudge = {
  name: 'scripted',
  scalar: false,
  async judge(_problem, chunks, options = {}): Promise<JudgeResult> {
    const indices = options.only ?? chunks.map((_, i) => i);
    const judgments = indices.map((i) => {
      const bad = chunks[i].includes('BUG');
      const meh = chunks[i].includes('MEH');
      return {
        chunkIndex: i,
        verdict: bad ? ('negative' as const) : meh ? ('neutral' as const) : ('positive' as const),
        score: bad ? 0.1 : meh ? 0.6 : 0.9,
      };
    });
    const cost = emptyCost();
    cost.judge.calls = indices.length;
    const firstBad = judgments.find((j) => j.verdict === 'negative');
    return { judgments, firstError: firstBad ? firstBad.chunkIndex : -1, cost, formatFailures: 0 };
  },
};

describe('code policy prompts', () => {
  it('round-trips problem and prefix', () => {
    const prompt = renderCodePolicyPrompt('Add.', 'def add(a, b):\n\n');
    expect(parseCodePolicyPrompt(prompt)).toEqual({ question: 'Add.', prefix: 'def add(a, b):\n\n' });
    expect(parseCodePolicyPrompt('Solve this')).toBeNull();
  });
});

describe('PRM-guided greedy code search', () => {
  it('rejects a bad block, keeps the good one, and runs the tests', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG', '    return a + b'],
      'def add(a, b):\n\n    return a + b\n\n': ['```'],
    });
    const r = await codeGreedySearch(problem, { policy: createCodePolicy(model), judge, sandbox });
    expect(r.finalText).toBe('def add(a, b):\n    return a + b');
    expect(r.correct).toBe(true);
    expect(r.steps.map((s) => s.verdict)).toEqual(['positive', 'positive']);
    expect(r.steps[1].attempts).toBe(2);
    expect(r.stats).toMatchObject({ samples: 4, backtracks: 0, ended: true });
    expect(r.cost.policy.calls).toBe(4);
    expect(r.cost.judge.calls).toBe(3);
    expect(model.requests.every((q) => q.stop?.includes('\n\n'))).toBe(true);
  });

  it('backtracks when every child of a node is negative', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):', 'def add(x, y):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG', '    return b - a  # BUG'],
      'def add(x, y):\n\n': ['    return x + y'],
      'def add(x, y):\n\n    return x + y\n\n': ['```'],
    });
    const r = await codeGreedySearch(problem, {
      policy: createCodePolicy(model),
      judge,
      sandbox,
      childrenPerNode: 2,
    });
    expect(r.finalText).toBe('def add(x, y):\n    return x + y');
    expect(r.stats.backtracks).toBe(1);
    expect(r.correct).toBe(true);
  });

  it('keeps the best-scored block when out of backtracks, and the verifier says it is wrong', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG'],
      'def add(a, b):\n\n    return a - b  # BUG\n\n': ['```'],
    });
    const r = await codeGreedySearch(problem, {
      policy: createCodePolicy(model),
      judge,
      sandbox,
      childrenPerNode: 2,
      maxBacktracks: 0,
    });
    expect(r.stats.fallbacks).toBe(1);
    expect(r.correct).toBe(false);
    expect(r.check.status).toBe('failed');
  });
});

describe('best-of-N for code', () => {
  it('picks the candidate with the best aggregated step score and verifies it', async () => {
    const model = scriptedCodeModel({
      '': [
        'def add(a, b):\n    return a - b  # BUG\n',
        'def add(a, b):\n    s = a + b  # MEH\n    return s\n',
        'def add(a, b):\n    """Sum."""\n    return a + b\n```\nDone.',
      ],
    });
    const r = await codeBestOfN(problem, {
      policy: createCodePolicy(model),
      judge,
      sandbox,
      n: 3,
      verifyAll: true,
    });
    expect(r.stats.chosen).toBe(2);
    expect(r.finalText).toBe('def add(a, b):\n    """Sum."""\n    return a + b');
    expect(r.correct).toBe(true);
    expect(r.stats.passing).toBe(2);
    expect(r.stats.oracle).toBe(true);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0].n).toBe(3);
  });

  it('aggregates step scores as documented', () => {
    expect(aggregateStepScores([0.9, 0.5, 0.8], 'min')).toBe(0.5);
    expect(aggregateStepScores([0.9, 0.5, 0.8], 'last')).toBe(0.8);
    expect(aggregateStepScores([0.9, 0.5, 0.8], 'mean')).toBeCloseTo(2.2 / 3, 12);
    expect(aggregateStepScores([0.5, 0.5], 'product')).toBe(0.25);
    expect(aggregateStepScores([], 'min')).toBe(0);
  });

  it('runs any strategy outcome through the code verifier', async () => {
    const verified = await verifyCodeSearchResult(
      problem,
      { finalText: '```python\ndef add(a, b):\n    return a + b\n```', correct: false, answer: null },
      { sandbox },
    );
    expect(verified.correct).toBe(true);
    expect(verified.codeCheck.tests.map((t) => t.status)).toEqual(['passed', 'passed']);
  });
});
