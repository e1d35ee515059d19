import { describe, expect, it } from 'vitest';
import { BAD_MARKER } from '../../src/prompts/refine.js';
import { getStrategy, runStrategy, STRATEGY_NAMES } from '../../src/search/registry.js';
import type { SearchResult } from '../../src/search/types.js';
import { boxedChecker as checker, fakeJudge, fakePolicy, fakeProblem } from './fakes.js';

const problem = fakeProblem('p1', 4);

function expectCostMatches(
  r: SearchResult,
  counters: { calls: number; promptTokens: number; completionTokens: number },
) {
  expect(r.cost.policy.calls).toBe(counters.calls);
  expect(r.cost.policy.promptTokens).toBe(counters.promptTokens);
  expect(r.cost.policy.completionTokens).toBe(counters.completionTokens);
}

describe('chunk-reset', () => {
  it('a judge reply with no parsable verdict is an abstention: the chunk is regenerated, not accepted', async () => {
    const { policy } = fakePolicy({ stepError: 0 });
    // The first judge call abstains (its only vote failed to parse); later calls accept.
    const { judge } = fakeJudge({
      verdict: (_c, _i, call) =>
        (call === 0
          ? { verdict: 'neutral', score: 0.5, formatFailures: 1, votes: 1 }
          : { verdict: 'positive', score: 1 }) as { verdict: 'neutral' | 'positive'; score: number },
    });
    const r = await runStrategy('chunk-reset', problem, {}, { policy, judge, checker });
    expect(r.stats.abstentions).toBe(1);
    expect(r.chunks[0].attempts).toBe(2);
    expect(r.trace.filter((t) => t.depth === 0).map((t) => t.status)).toEqual(['rejected', 'accepted']);
  });

  it('regenerates a rejected chunk from the same prefix and judges only the new chunk', async () => {
    // The policy writes a bad step 2 on its first two tries, then a good one.
    let tries = 0;
    const { policy, counters } = fakePolicy({
      step: (i) => {
        if (i === 1) return tries++ < 2 ? 'step 2 bad' : 'step 2 ok';
        return `step ${i + 1} ok`;
      },
    });
    const { judge, calls } = fakeJudge();
    const r = await runStrategy('chunk-reset', problem, {}, { policy, judge, checker });
    expect(r.correct).toBe(true);
    expect(r.chunks.map((c) => c.attempts)).toEqual([1, 3, 1, 1]);
    expect(r.chunks.map((c) => c.verdict)).toEqual(['positive', 'positive', 'positive', 'positive']);
    expect(r.trace.filter((n) => n.status === 'rejected').map((n) => n.text)).toEqual([
      'step 2 bad',
      'step 2 bad',
    ]);
    // every judge call names exactly the newest chunk
    for (const [k, o] of calls.options.entries()) expect(o.only).toEqual([calls.chunks[k].length - 1]);
    // the regenerations continue the same prefix with distinct seeds (not cache hits)
    const step2 = counters.requests.filter((q) => q.prompt?.endsWith('step 1 ok\n\n'));
    expect(step2).toHaveLength(3);
    expect(new Set(step2.map((q) => q.seed)).size).toBe(3);
    expect(r.stats.resets).toBe(2);
    expectCostMatches(r, counters);
    expect(r.cost.judge.calls).toBe(calls.calls);
    // 4 kept chunks + 1 rejected: the second, identical 'step 2 bad' reuses the first ruling.
    expect(r.cost.judge.calls).toBe(5);
    expect(r.stats.repeatedAttempts).toBe(1);
  });

  it('after 5 rejections keeps the best-scored attempt (fallback) and goes on', async () => {
    const { policy } = fakePolicy({
      step: (i, d) => (i === 0 ? `step 1 bad draw ${d.toFixed(3)}` : `step ${i + 1} ok`),
    });
    const scores = [0.1, 0.4, 0.2, 0.4, 0.3];
    let firstChunkCalls = 0;
    const { judge } = fakeJudge({
      verdict: (_chunk, index) =>
        index === 0
          ? { verdict: 'negative', score: scores[firstChunkCalls++] }
          : { verdict: 'positive', score: 1 },
    });
    const r = await runStrategy('chunk-reset', problem, {}, { policy, judge, checker });
    const first = r.trace.filter((n) => n.depth === 0);
    expect(first).toHaveLength(5);
    expect(first.map((n) => n.status)).toEqual(['rejected', 'fallback', 'rejected', 'rejected', 'rejected']);
    expect(r.chunks[0].node).toBe(first[1].id);
    expect(r.chunks[0].attempts).toBe(5);
    expect(r.stats.fallbacks).toBe(1);
    expect(r.chunks).toHaveLength(4);
    const last = await runStrategy(
      'chunk-reset',
      problem,
      { fallback: 'last', maxAttempts: 2 },
      { policy, judge, checker },
    );
    expect(last.trace.filter((n) => n.depth === 0).map((n) => n.status)).toEqual(['rejected', 'fallback']);
  });
});

describe('greedy-prm', () => {
  it('backtracks to the parent when every child is negative, then recovers', async () => {
    // Step 2 is always "ok" but judged positive; step 3 is always judged negative under the first
    // step-2 node, and positive under any later one.
    let step2Seen = 0;
    const { policy } = fakePolicy({
      step: (i) => (i === 1 ? `step 2 ok v${step2Seen++}` : `step ${i + 1} ok`),
    });
    const { judge } = fakeJudge({
      verdict: (chunk, index, _call) => {
        if (index === 2 && /v0/.test(JSON.stringify(chunk))) return { verdict: 'negative', score: 0.1 };
        return { verdict: 'positive', score: 0.9 };
      },
    });
    // The judge sees the chunk alone; encode the parent in the step-3 text through the prefix.
    const { judge: contextual } = fakeJudge();
    const wrapped = {
      ...contextual,
      name: 'ctx',
      scalar: false,
      judge: async (p: typeof problem, chunks: readonly string[], o?: Parameters<typeof judge.judge>[2]) => {
        const idx = o?.only?.[0] ?? 0;
        const tagged = chunks.map((c, i) => (i === idx && idx === 2 ? `${c} after ${chunks[1]}` : c));
        return judge.judge(p, tagged, o);
      },
    };
    const r = await runStrategy(
      'greedy-prm',
      problem,
      { childrenPerNode: 2, maxBacktracks: 3 },
      { policy, judge: wrapped, checker },
    );
    expect(r.backtracks).toHaveLength(1);
    const abandoned = r.trace[r.backtracks[0].from];
    expect(abandoned.text).toBe('step 2 ok v0');
    expect(abandoned.status).toBe('backtracked');
    expect(r.backtracks[0].to).toBe(r.chunks[0].node);
    expect(r.chunks.map((c) => c.text.split(' so')[0])).toEqual([
      'step 1 ok',
      'step 2 ok v1',
      'step 3 ok',
      'step 4 ok',
    ]);
    expect(r.chunks[1].attempts).toBe(2);
    expect(r.correct).toBe(true);
    expect(r.stats.backtracks).toBe(1);
  });

  it('accepts the best neutral child when no child is positive, and falls back at the root', async () => {
    const { policy } = fakePolicy({ step: (i, d) => `step ${i + 1} ok ${d.toFixed(4)}` });
    let n = 0;
    const { judge } = fakeJudge({
      verdict: (_c, index) => {
        if (index === 0) return { verdict: 'negative', score: [0.2, 0.3, 0.1][n++ % 3] };
        return { verdict: 'neutral', score: 0.5 };
      },
    });
    const r = await runStrategy('greedy-prm', problem, { childrenPerNode: 3 }, { policy, judge, checker });
    const roots = r.trace.filter((t) => t.parent === null);
    expect(roots.map((t) => t.status)).toEqual(['rejected', 'fallback', 'rejected']);
    expect(r.stats.fallbacks).toBe(1);
    expect(r.chunks.slice(1).every((c) => c.verdict === 'neutral' && c.attempts === 3)).toBe(true);
    expect(r.backtracks).toHaveLength(0);
  });

  it('maps scores through thresholds when they are set', async () => {
    const { policy } = fakePolicy({ stepError: 0 });
    const { judge } = fakeJudge({ verdict: () => ({ verdict: 'positive', score: 0.5 }) });
    const r = await runStrategy(
      'greedy-prm',
      problem,
      { positiveAt: 0.8, negativeBelow: 0.2, childrenPerNode: 2 },
      { policy, judge },
    );
    expect(r.chunks.every((c) => c.verdict === 'neutral' && c.attempts === 2)).toBe(true);
  });
});

describe('beam search', () => {
  it('costs N step samples per depth and returns the best finished beam', async () => {
    const { policy, counters } = fakePolicy({ stepError: 0.3 });
    const { judge, calls } = fakeJudge();
    const r = await runStrategy('beam', problem, { n: 8, beamWidth: 4 }, { policy, judge, checker });
    expect(r.stats.keep).toBe(2);
    expect(counters.samples).toBe(8 * 4); // 4 depths × N
    expect(counters.calls).toBe(1 + 3 * 2); // root call with n = 8, then 2 survivors × 1 call each
    expect(calls.calls).toBe(counters.samples);
    expect(r.correct).toBe(true);
    expect(r.chunks.every((c) => c.verdict === 'positive')).toBe(true);
    expect(r.trace.filter((t) => t.status === 'accepted')).toHaveLength(4);
    expectCostMatches(r, counters);
  });
});

describe('best-of-n, weighted vote, majority', () => {
  it('best-of-N picks the argmax of the aggregated step scores', async () => {
    const { policy, counters } = fakePolicy({ stepError: 0.3 });
    const { judge, calls } = fakeJudge();
    const r = await runStrategy('best-of-n', problem, { n: 6, seed: 3 }, { policy, judge, checker });
    // One call per candidate, each with its own seed: the pool is nested across N (src/search/pool.ts).
    expect(counters.calls).toBe(6);
    expect(counters.samples).toBe(6);
    expect(calls.calls).toBe(6);
    const cands = r.trace;
    expect(cands).toHaveLength(6);
    const chosen = cands.find((c) => c.status === 'accepted')!;
    expect(chosen.score).toBe(Math.max(...cands.map((c) => c.score ?? 0)));
    expect(chosen.id).toBe(cands.findIndex((c) => c.score === chosen.score));
    expect(r.correct).toBe(!chosen.text.includes('bad'));
    expect(r.chunks.length).toBe(4);
  });

  it('weighted vote sums scores per answer; majority counts answers without a judge', async () => {
    // Five solutions: three wrong ones (answer 13) judged 0.2, two right (42) judged 0.9.
    const texts = ['bad', 'ok', 'bad', 'ok', 'bad'];
    let k = 0;
    const { policy } = fakePolicy({ step: (i) => `step ${i + 1} ${i === 0 ? texts[k++ % 5] : 'ok'}` });
    const { judge } = fakeJudge({
      verdict: (chunk) =>
        chunk.includes('bad') ? { verdict: 'negative', score: 0.2 } : { verdict: 'positive', score: 0.9 },
    });
    const wv = await runStrategy(
      'weighted-vote',
      problem,
      { n: 5, aggregation: 'min' },
      { policy, judge, checker },
    );
    expect(wv.answer).toBe('42');
    expect(wv.stats.distinctAnswers).toBe(2);
    k = 0;
    const mv = await runStrategy('majority', problem, { n: 5 }, { policy, checker });
    expect(mv.answer).toBe('13');
    expect(mv.cost.judge.calls).toBe(0);
    expect(mv.stats.winningVotes).toBe(3);
  });
});

describe('GLoRe refinement', () => {
  it('refines a draft the outcome model doubts: [BAD] before the first negative step, reranked by the ORM', async () => {
    let drafts = 0;
    const { policy, counters } = fakePolicy({
      step: (i) => (i === 2 && drafts++ === 0 ? 'step 3 bad' : `step ${i + 1} ok`),
    });
    const { judge } = fakeJudge();
    const { judge: outcome } = fakeJudge({
      verdict: (chunk) =>
        chunk.includes('13') ? { verdict: 'negative', score: 0.1 } : { verdict: 'positive', score: 0.8 },
    });
    const r = await runStrategy('refine', problem, {}, { policy, judge, outcome, checker });
    expect(r.stats.refined).toBe(true);
    expect(r.stats.firstError).toBe(2);
    const local = counters.requests.find((q) => q.messages?.[0].content.includes(BAD_MARKER));
    expect(local).toBeDefined();
    const user = local!.messages![0].content;
    expect(user).toContain(`step 2 ok\n\n${BAD_MARKER} step 3 bad`);
    expect(local!.messages![1]).toEqual({ role: 'assistant', content: 'step 1 ok\n\nstep 2 ok\n\n' });
    expect(r.trace.map((t) => t.label)).toEqual(['draft', 'global', 'local']);
    expect(['global', 'local']).toContain(r.stats.chosen);
    expect(r.correct).toBe(true);
    expect(
      r.trace.find((t) => t.label === 'local')!.text.startsWith('step 1 ok\n\nstep 2 ok\n\nstep 3 ok'),
    ).toBe(true);
  });

  it('greedy drafts: draftTemperature 0 samples the draft at temperature 0, refinements keep the policy temperature', async () => {
    const { policy, counters } = fakePolicy({ stepError: 1 });
    const { judge } = fakeJudge();
    const { judge: outcome } = fakeJudge({ verdict: () => ({ verdict: 'negative', score: 0.1 }) });
    await runStrategy(
      'refine',
      problem,
      { draftTemperature: 0, temperature: 0.7 },
      { policy, judge, outcome, checker },
    );
    expect(counters.requests[0].temperature).toBe(0);
    expect(counters.requests.slice(1).every((q) => q.temperature !== 0)).toBe(true);
    const { policy: p2, counters: c2 } = fakePolicy({ stepError: 1 });
    await runStrategy('refine', problem, { temperature: 0.7 }, { policy: p2, judge, outcome, checker });
    expect(c2.requests[0].temperature).toBe(0.7);
  });

  it('keeps a draft the outcome model trusts, without refining', async () => {
    const { policy, counters } = fakePolicy({ stepError: 0 });
    const { judge, calls } = fakeJudge();
    const { judge: outcome } = fakeJudge({ verdict: () => ({ verdict: 'positive', score: 0.9 }) });
    const r = await runStrategy('refine', problem, {}, { policy, judge, outcome, checker });
    expect(r.stats.refined).toBe(false);
    expect(counters.calls).toBe(1);
    expect(calls.calls).toBe(0);
    expect(r.cost.judge.calls).toBe(1);
  });
});

describe('registry', () => {
  it('runs every strategy, each result carrying policy and judge cost', async () => {
    for (const name of STRATEGY_NAMES) {
      const { policy, counters } = fakePolicy();
      const { judge, calls } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
      const r = await runStrategy(name, problem, { n: 4 }, { policy, judge, checker });
      expect(r.strategy).toBe(name);
      expect(r.finalText.length).toBeGreaterThan(0);
      expect(r.cost.policy.calls).toBe(counters.calls);
      expect(r.cost.policy.completionTokens).toBeGreaterThan(0);
      // The judge cost is the calls the judge saw: some for a judged strategy, none otherwise.
      expect(r.cost.judge.calls, name).toBe(calls.calls);
      if (getStrategy(name).needsJudge) expect(calls.calls, name).toBeGreaterThan(0);
      else expect(calls.calls, name).toBe(0);
    }
  });
  it('rejects unknown strategies and judge-less runs of judged strategies', async () => {
    const { policy } = fakePolicy();
    await expect(runStrategy('nope', problem, {}, { policy, checker })).rejects.toThrow(
      /unknown strategy "nope"/,
    );
    await expect(runStrategy('chunk-reset', problem, {}, { policy, checker })).rejects.toThrow(
      /needs a judge/,
    );
  });
});
