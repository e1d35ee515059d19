import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import {
  binarySearchFirstError,
  bisectFirstFalse,
  createPrefixMemo,
  estimatePrefixValue,
  estimateStepValues,
  prefixSeed,
} from '../../src/label/estimate.js';
import { labelSolution } from '../../src/label/label.js';
import { createPolicy } from '../../src/models/policy.js';
import { deriveSeed } from '../../src/models/seeds.js';
import { boxedChecker, createFakePolicyModel } from './fake-model.js';

const problem: Problem = {
  id: 'p1',
  question: 'What is 6 × 7?',
  answer: '42',
  domain: 'math',
  source: 'test',
};

/** Success rate: 0 once the prefix holds a BAD step, 1 with a SURE step, else 0.5. */
const rate = (prefix: string) => (prefix.includes('BAD') ? 0 : prefix.includes('SURE') ? 1 : 0.5);

describe('estimateStepValues', () => {
  it('one request with n = M per prefix 0…H−1, Q̂ = share of checked-correct rollouts; Q̂(H) = the check', async () => {
    const model = createFakePolicyModel(rate);
    const chunks = ['a', 'SURE b', 'BAD c', 'd'];
    const v = await estimateStepValues(createPolicy(model), boxedChecker, problem, chunks, {
      rollouts: 16,
      seed: 3,
    });
    expect(model.calls).toHaveLength(4);
    expect(model.calls.every((c) => c.n === 16)).toBe(true);
    // No rollout from the finished solution.
    expect(new Set(model.calls.map((c) => c.prefix))).toEqual(
      new Set(['', 'a\n\n', 'a\n\nSURE b\n\n', 'a\n\nSURE b\n\nBAD c\n\n']),
    );
    expect(v.q[2]).toBe(1);
    expect(v.q[3]).toBe(0);
    expect(v.q[4]).toBe(0);
    expect(v.prefixes[4]).toMatchObject({ checked: true, samples: 0, requests: 0 });
    for (const x of [v.q[0], v.q[1]]) {
      expect(x).toBeGreaterThan(0);
      expect(x).toBeLessThan(1);
      expect(Number.isInteger(x * 16)).toBe(true);
    }
    expect(v.rollouts).toBe(64);
    expect(v.rolloutTokens).toBe(64 * 7);
    expect(v.cost.policy.calls).toBe(4);
    // Seeds depend on (run seed, prefix length) only.
    const seeds = new Map(model.calls.map((c) => [c.prefix.split('\n\n').length - 1, c.seed]));
    for (const [len, seed] of seeds) expect(seed).toBe(prefixSeed(3, len));
  });

  it('the same seed gives the same values; another seed other rollouts', async () => {
    const chunks = ['a', 'b', 'c'];
    const run = async (seed: number) =>
      (
        await estimateStepValues(createPolicy(createFakePolicyModel(rate)), boxedChecker, problem, chunks, {
          rollouts: 32,
          seed,
        })
      ).q;
    expect(await run(1)).toEqual(await run(1));
    expect(await run(1)).not.toEqual(await run(2));
  });

  it('the whole solution is valued by its own check, even where every rollout would say otherwise', async () => {
    // Rollouts from any prefix always fail; the finished solution is right.
    const model = createFakePolicyModel(() => 0);
    const chunks = ['6 × 7 = 42.', 'So \\boxed{42}.'];
    const v = await estimateStepValues(createPolicy(model), boxedChecker, problem, chunks, { rollouts: 8 });
    expect(v.q).toEqual([0, 0, 1]);
    const known = await estimateStepValues(
      createPolicy(model),
      boxedChecker,
      problem,
      ['x', 'y'],
      { rollouts: 8 },
      true,
    );
    expect(known.q[2]).toBe(1);
  });

  it('early stopping draws batches until the first correct rollout, with the backend block seeds', async () => {
    const model = createFakePolicyModel(rate);
    const est = await estimatePrefixValue(createPolicy(model), boxedChecker, problem, ['a'], 1, {
      rollouts: 16,
      seed: 5,
      earlyStop: { batchSize: 1 },
    });
    expect(est.correct).toBe(1);
    expect(est.samples).toBe(model.calls.length);
    expect(est.samples).toBeLessThan(16);
    const s = prefixSeed(5, 1);
    model.calls.forEach((c, k) => {
      expect(c.n).toBe(1);
      expect(c.seed).toBe(deriveSeed(s, k));
    });
    // A hopeless prefix still draws all M (in batches of 4: 4 requests).
    const bad = createFakePolicyModel(rate);
    const e2 = await estimatePrefixValue(createPolicy(bad), boxedChecker, problem, ['BAD'], 1, {
      rollouts: 16,
      earlyStop: true,
    });
    expect(e2.samples).toBe(16);
    expect(e2.q).toBe(0);
    expect(bad.calls.map((c) => c.n)).toEqual([4, 4, 4, 4]);
  });

  it('a memo shares identical prefixes (e.g. the empty prefix of one problem) and charges them once', async () => {
    const model = createFakePolicyModel(rate);
    const memo = createPrefixMemo();
    const policy = createPolicy(model);
    const a = await estimateStepValues(policy, boxedChecker, problem, ['a', 'x', 'z'], { rollouts: 8, memo });
    const b = await estimateStepValues(policy, boxedChecker, problem, ['a', 'y', 'z'], { rollouts: 8, memo });
    // '', 'a', 'a x', 'a y': the shared '' and 'a' are requested once.
    expect(model.calls).toHaveLength(4);
    expect(b.q.slice(0, 2)).toEqual(a.q.slice(0, 2));
    expect(b.rollouts).toBe(24);
    expect(b.cost.policy.calls).toBe(1);
  });

  it('accepts checkers that return {correct, answer}', async () => {
    const model = createFakePolicyModel(() => 1);
    const est = await estimatePrefixValue(
      createPolicy(model),
      async (p, t) => ({ correct: boxedChecker(p, t), answer: '42' }),
      problem,
      [],
      0,
      { rollouts: 4, keepRollouts: true },
    );
    expect(est.q).toBe(1);
    expect(est.rollouts?.map((r) => [r.afterChunk, r.answer, r.correct])).toEqual(
      Array(4).fill([-1, '42', true]),
    );
  });

  it('rejects bad rollout counts and prefix lengths', async () => {
    const policy = createPolicy(createFakePolicyModel(rate));
    await expect(estimateStepValues(policy, boxedChecker, problem, ['a'], { rollouts: 0 })).rejects.toThrow(
      /positive integer/,
    );
    await expect(
      estimatePrefixValue(policy, boxedChecker, problem, ['a'], 2, { rollouts: 2 }),
    ).rejects.toThrow(RangeError);
  });
});

describe('binary first-error search', () => {
  it('bisectFirstFalse finds the boundary of a monotone predicate in ⌈log2(n+1)⌉ probes', async () => {
    for (let n = 0; n <= 20; n++) {
      for (let boundary = 0; boundary <= n; boundary++) {
        let probes = 0;
        const got = await bisectFirstFalse(n, async (i) => {
          probes++;
          return i < boundary;
        });
        expect(got).toBe(boundary === n ? -1 : boundary);
        expect(probes).toBeLessThanOrEqual(Math.ceil(Math.log2(n + 1)));
      }
    }
  });

  it('finds the BAD chunk with O(log H) prefix estimates', async () => {
    const chunks = Array.from({ length: 12 }, (_, i) => (i === 7 ? 'BAD step' : `step ${i}`));
    const model = createFakePolicyModel((p) => (p.includes('BAD') ? 0 : 1));
    const found = await binarySearchFirstError(createPolicy(model), boxedChecker, problem, chunks, {
      rollouts: 8,
    });
    expect(found.firstError).toBe(7);
    expect(found.probes.length).toBeLessThanOrEqual(4);
    expect(found.rollouts).toBe(found.probes.filter((p) => !p.checked).length * 8);
    // A clean solution whose final answer is right: the last prefix is the check, not rollouts.
    const cleanChunks = [...chunks.slice(0, 11).map((c) => c.replace('BAD', 'ok')), 'So \\boxed{42}.'];
    const cleanModel = createFakePolicyModel(() => 1);
    const clean = await binarySearchFirstError(createPolicy(cleanModel), boxedChecker, problem, cleanChunks, {
      rollouts: 8,
    });
    expect(clean.firstError).toBe(-1);
    expect(clean.probes.at(-1)?.checked).toBe(true);
    expect(cleanModel.calls.every((c) => !c.prefix.includes('boxed'))).toBe(true);
  });

  it('labelSolution in binary mode: positive before, negative at, undetermined after the first error', async () => {
    const chunks = ['a', 'b', 'BAD', 'c', 'd'];
    const model = createFakePolicyModel((p) => (p.includes('BAD') ? 0 : 1));
    const { record } = await labelSolution(
      createPolicy(model),
      boxedChecker,
      { id: 's', problem, chunks },
      { rollouts: 4, signals: ['abs-q', 'sorm'], search: 'binary' },
    );
    expect(record.firstError).toEqual({ 'abs-q': 2, sorm: 2 });
    expect(record.chunks.map((c) => c.labels['abs-q'])).toEqual([true, true, false, null, null]);
    expect(record.q0).toBeNull();
    expect(record.chunks[2].q).toBe(0);
    expect(record.chunks.filter((c) => c.q !== null).length).toBe(model.calls.length);
    // The whole solution is checked for final_answer_correct: "d" has no box.
    expect(record.finalAnswerCorrect).toBe(false);
  });

  it('binary mode and early stop refuse signals that need the value itself', async () => {
    const policy = createPolicy(createFakePolicyModel(rate));
    const s = { id: 's', problem, chunks: ['a'] };
    await expect(
      labelSolution(policy, boxedChecker, s, { rollouts: 4, signals: ['rel-ratio'], search: 'binary' }),
    ).rejects.toThrow(/rel-ratio/);
    await expect(
      labelSolution(policy, boxedChecker, s, { rollouts: 4, signals: ['abs-q', 'ms-soft'], earlyStop: true }),
    ).rejects.toThrow(/ms-soft/);
  });
});

describe('labelSolution (linear)', () => {
  it('writes q, labels per signal, first errors and cost', async () => {
    const model = createFakePolicyModel((p) => (p.includes('BAD') ? 0 : p.includes('SURE') ? 1 : 0.5));
    const { record, requests } = await labelSolution(
      createPolicy(model),
      boxedChecker,
      { id: 'p1#0', problem, chunks: ['SURE a', 'BAD', 'c'], correct: false },
      { rollouts: 8, signals: ['abs-q', 'rel-ratio', 'ms-soft', 'sorm'], seed: 1 },
    );
    // Prefixes 0, 1, 2; the whole solution is its check (correct: false).
    expect(requests).toBe(3);
    expect(record.id).toBe('p1#0');
    expect(record.problem).toBe(problem.question);
    expect(record.answer).toBe('42');
    expect(record.chunks.map((c) => c.q)).toEqual([1, 0, 0]);
    expect(record.chunks[0].labels).toEqual({ 'abs-q': true, 'rel-ratio': true, 'ms-soft': 1, sorm: true });
    expect(record.firstError).toEqual({ 'abs-q': 1, 'rel-ratio': 1, 'ms-soft': 1, sorm: 1 });
    expect(record.cost).toEqual({ rollouts: 24, tokens: 24 * 7 });
    expect(record.chunks[2].rollouts).toBe(0);
    expect(record.finalAnswerCorrect).toBe(false);
  });
});
