import { afterAll, describe, expect, it } from 'vitest';
import { createCodeDomain } from '../../src/code/domain.js';
import { createCodePolicy } from '../../src/code/policy.js';
import { emptyCost } from '../../src/core/cost.js';
import { UsageError } from '../../src/core/errors.js';
import type { JudgeResult, StepJudge } from '../../src/judge/types.js';
import { parseCodePolicyPrompt, renderCodePolicyPrompt } from '../../src/prompts/code.js';
import { bestOfN } from '../../src/search/best-of-n.js';
import { greedyPrmSearch } from '../../src/search/greedy-prm.js';
import { resolveSearchConfig, runStrategy } from '../../src/search/registry.js';
import { Sandbox } from '../../src/verify/code/sandbox.js';
import { humanevalAddProblem, scriptedCodeModel, toyAddProblem } from '../support/code-problems.js';

/**
 * The search strategies of src/search on the code domain (src/code/domain.ts): the same
 * greedy-prm.ts and best-of-n.ts as math, with code's templates, block splitter, closing-fence
 * end test and the problem's tests as checker.
 */
const sandbox = new Sandbox({ limits: { timeoutMs: 10_000, programTimeoutMs: 10_000 } });
afterAll(() => sandbox.close());
const domain = createCodeDomain({ sandbox });

const problem = toyAddProblem;
const humaneval = humanevalAddProblem;

/** A judge that calls a block bad when it says BUG, so-so when it says MEH. */
const judged: Array<{ question: string; chunks: readonly string[]; only?: number[] }> = [];
const judge: StepJudge = {
  name: 'scripted',
  scalar: false,
  async judge(p, chunks, options = {}): Promise<JudgeResult> {
    judged.push({ question: p.question, chunks, only: options.only });
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
    expect(parseCodePolicyPrompt(prompt)).toEqual({
      question: 'Add.',
      prefix: 'def add(a, b):\n\n',
      segmentation: 'paragraph',
    });
    expect(parseCodePolicyPrompt('Solve this')).toBeNull();
  });
});

describe('greedy PRM search (src/search/greedy-prm.ts) on the code domain', () => {
  it('rejects a bad block, keeps the good one, stops at the fence and runs the tests', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG', '    return a + b'],
      'def add(a, b):\n\n    return a + b\n\n': ['```'],
    });
    judged.length = 0;
    const r = await runStrategy(
      'greedy-prm',
      problem,
      {},
      { policy: createCodePolicy(model), judge, domain },
    );
    expect(r.strategy).toBe('greedy-prm');
    expect(r.finalText).toBe('def add(a, b):\n    return a + b');
    expect(r.correct).toBe(true);
    expect(r.answer).toBe('def add(a, b):\n    return a + b');
    expect(r.chunks.map((c) => c.verdict)).toEqual(['positive', 'positive']);
    expect(r.chunks.map((c) => c.attempts)).toEqual([1, 2]);
    // One trace for math and code: the rejected block is in it, under the accepted header.
    expect(r.trace.map((n) => [n.depth, n.status])).toEqual([
      [0, 'accepted'],
      [1, 'rejected'],
      [1, 'accepted'],
    ]);
    expect(r.stats).toMatchObject({ backtracks: 0, ended: true });
    // One ledger: 4 policy calls (the last one wrote only the closing fence), 3 judge calls.
    expect(r.cost.policy.calls).toBe(4);
    expect(r.cost.judge.calls).toBe(3);
    expect(model.requests.every((q) => q.stop?.includes('\n\n') && q.stop.includes('```'))).toBe(true);
    // The code preset of SearchConfig: 256 tokens per block.
    expect(model.requests.every((q) => q.maxTokens === 256)).toBe(true);
    // The judge sees the problem as the policy does, with its tests.
    expect(judged[0]!.question).toContain('Your code should pass these tests:');
  });

  it('backtracks when every child of a node is negative, and never re-picks the abandoned one', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):', 'def add(x, y):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG', '    return b - a  # BUG'],
      'def add(x, y):\n\n': ['    return x + y'],
      'def add(x, y):\n\n    return x + y\n\n': ['```'],
    });
    const r = await greedyPrmSearch(problem, resolveSearchConfig({ childrenPerNode: 2 }), {
      policy: createCodePolicy(model),
      judge,
      domain,
    });
    expect(r.finalText).toBe('def add(x, y):\n    return x + y');
    expect(r.stats.backtracks).toBe(1);
    expect(r.backtracks).toHaveLength(1);
    expect(r.trace[r.backtracks[0]!.from]!.status).toBe('backtracked');
    expect(r.chunks.map((c) => c.node)).not.toContain(r.backtracks[0]!.from);
    expect(r.correct).toBe(true);
  });

  it('keeps the best-scored block when out of backtracks, and the tests say it is wrong', async () => {
    const model = scriptedCodeModel({
      '': ['def add(a, b):'],
      'def add(a, b):\n\n': ['    return a - b  # BUG'],
      'def add(a, b):\n\n    return a - b  # BUG\n\n': ['```'],
    });
    const r = await greedyPrmSearch(problem, resolveSearchConfig({ childrenPerNode: 2, maxBacktracks: 0 }), {
      policy: createCodePolicy(model),
      judge,
      domain,
    });
    expect(r.stats.fallbacks).toBe(1);
    expect(r.trace.some((n) => n.status === 'fallback')).toBe(true);
    expect(r.correct).toBe(false);
  });

  it("continues HumanEval's signature as a given step: never judged, always in the final code", async () => {
    const header = 'def add(a, b):\n    """Return a + b."""';
    const model = scriptedCodeModel({
      [`${header}\n\n`]: ['    return a + b'],
      [`${header}\n\n    return a + b\n\n`]: ['```'],
    });
    judged.length = 0;
    const r = await runStrategy(
      'greedy-prm',
      humaneval,
      {},
      { policy: createCodePolicy(model), judge, domain },
    );
    expect(r.finalText).toBe(`${header}\n    return a + b`);
    expect(r.chunks.map((c) => c.text)).toEqual(['    return a + b']);
    expect(judged.map((j) => j.only)).toEqual([[1]]);
    expect(judged[0]!.chunks[0]).toBe(header);
    expect(r.correct).toBe(true);
  });

  it('refuses a code problem in the math domain instead of searching it with the math prompt', async () => {
    const model = scriptedCodeModel({ '': ['def add(a, b):'] });
    await expect(
      runStrategy('greedy-prm', problem, {}, { policy: createCodePolicy(model), judge }),
    ).rejects.toThrow(UsageError);
  });
});

describe('best-of-N (src/search/best-of-n.ts) on the code domain', () => {
  it('picks the candidate with the best aggregated step score, and checks every candidate on request', async () => {
    const model = scriptedCodeModel({
      '': [
        'def add(a, b):\n    return a - b  # BUG\n',
        'def add(a, b):\n    s = a + b  # MEH\n    return s\n',
        'def add(a, b):\n    """Sum."""\n    return a + b\n```\nDone.',
      ],
    });
    const r = await runStrategy(
      'best-of-n',
      problem,
      { n: 3, checkCandidates: true },
      { policy: createCodePolicy(model), judge, domain },
    );
    expect(r.stats.chosen).toBe(2);
    expect(r.finalText).toBe('def add(a, b):\n    """Sum."""\n    return a + b');
    expect(r.correct).toBe(true);
    expect(r.stats).toMatchObject({ aggregation: 'min', passing: 2, oracle: true });
    expect(r.trace.map((n) => n.status)).toEqual(['pruned', 'pruned', 'accepted']);
    // One request per candidate, each with its own seed (the nested pool, src/search/pool.ts).
    expect(model.requests).toHaveLength(3);
    expect(model.requests.map((q) => q.n)).toEqual([1, 1, 1]);
    // The code preset: 1024 tokens per solution, stopped at the closing fence.
    expect(model.requests[0]).toMatchObject({ maxTokens: 1024, stop: ['\n```'] });
  });

  it('on HumanEval, scores only the blocks the policy wrote and checks the whole function', async () => {
    const header = 'def add(a, b):\n    """Return a + b."""';
    const model = scriptedCodeModel({ [`${header}\n\n`]: ['    s = a + b\n    return s\n```'] });
    judged.length = 0;
    const r = await bestOfN(humaneval, resolveSearchConfig({ ...domain.preset, n: 2 }), {
      policy: createCodePolicy(model),
      judge,
      domain,
    });
    expect(r.finalText).toBe(`${header}\n    s = a + b\n    return s`);
    expect(judged.every((j) => j.chunks[0] === header && !j.only?.includes(0))).toBe(true);
    expect(r.chunks.map((c) => c.text)).toEqual(['    s = a + b', '    return s']);
    expect(r.correct).toBe(true);
  });
});
