import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProcessBenchRecord } from '../../src/data/types.js';
import { evaluateChunks } from '../../src/evaluate/chunks.js';
import { predictionAt, runProcessBench } from '../../src/evaluate/processbench.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { createPolicy } from '../../src/models/policy.js';
import { parseJudgePrompt } from '../../src/prompts/judge.js';
import { DEFAULT_SEARCH_CONFIG, runStrategy } from '../../src/search/registry.js';
import { selectByJudge } from '../../src/train/select.js';
import { scriptedModel } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';

/**
 * A judge reply with no parsable verdict is an abstention: never "no error". The judge below
 * answers by the chunk it is shown: chunks containing "GOOD" are Positive, "BAD" Negative, and
 * "MUTE" get a reply without any boxed verdict.
 */
function markerJudge() {
  const model = scriptedModel((request) => {
    const chunk = parseJudgePrompt(request.messages ?? [])?.chunk ?? '';
    const text = chunk.includes('MUTE')
      ? 'I am not sure what to make of this step.'
      : chunk.includes('BAD')
        ? 'The arithmetic is wrong. \\boxed{Negative}'
        : 'Fine. \\boxed{Positive}';
    return Array.from({ length: request.n ?? 1 }, () => ({ text }));
  });
  return { model, judge: createGenerativeJudge(model, { name: 'generative:test:scripted' }) };
}

function sample(id: string, steps: string[], label: number): ProcessBenchRecord {
  return {
    id,
    subset: 'gsm8k',
    generator: 'test',
    problem: `Problem ${id}`,
    steps,
    final_answer_correct: label === -1,
    label,
  };
}

describe('a reply with no parsable verdict is an abstention', () => {
  it('ProcessBench: an abstention before the first negative is a miss, counted, with the share of format failures', async () => {
    const dir = tempDir('stepwise-abstention-');
    const { judge } = markerJudge();
    const samples = [
      // Chunk 0 unparsable, chunk 1 negative: the first error could be chunk 0 — a miss.
      sample('a', ['MUTE 1', 'BAD 2', 'GOOD 3'], 1),
      // Unparsable after the predicted error: the prediction stands.
      sample('b', ['BAD 1', 'MUTE 2'], 0),
      // All positive but one chunk unparsable: not a claim of "no error" — a miss.
      sample('c', ['GOOD 1', 'MUTE 2'], -1),
      sample('d', ['GOOD 1', 'GOOD 2'], -1),
    ];
    const report = await runProcessBench({
      judge,
      samples,
      predictionsPath: join(dir, 'p.jsonl'),
      concurrency: 1,
    });
    expect(report.abstained).toBe(2);
    // Replies: a judges MUTE (no verdict) then BAD, stops; b judges BAD, stops; c two; d two.
    expect(report.replies).toBe(7);
    expect(report.formatFailures).toBe(2);
    expect(report.formatFailureRate).toBeCloseTo(2 / 7, 12);
    // a is a miss (its label is 1, the judge's own first negative is 1 too); b a hit.
    expect(report.subsets.gsm8k.error_acc).toBe(50);
    // c is a miss, d a hit.
    expect(report.subsets.gsm8k.correct_acc).toBe(50);
  });

  it('threshold modes: an abstention at or before the thresholded first error makes a miss', () => {
    const row = { judgeFirstError: -1, scores: [0.9, 0.5, 0.2], abstainedAt: 1 };
    expect(predictionAt(row, 0.6)).toBeNull();
    expect(predictionAt(row, 0.3)).toBeNull();
    expect(predictionAt(row, 0.1)).toBeNull();
    expect(predictionAt({ ...row, abstainedAt: 2 }, 0.95)).toBe(0);
    expect(predictionAt({ ...row, abstainedAt: undefined }, 0.1)).toBe(-1);
    expect(predictionAt({ ...row, abstainedAt: undefined, abstained: true }, null)).toBeNull();
    expect(predictionAt({ judgeFirstError: 2, scores: [] }, null)).toBe(2);
  });

  it('eval chunks: abstained chunks are not compared, the first error left open is a miss, and the share is reported', async () => {
    const { judge } = markerJudge();
    const problem = { id: 'p', question: 'q', answer: '1', domain: 'math' as const, source: 'test' };
    const report = await evaluateChunks({
      judge,
      signal: 'abs-q',
      solutions: [
        { id: 'a', problem, chunks: ['MUTE 1', 'BAD 2'], labels: [true, false], firstError: 1 },
        { id: 'b', problem, chunks: ['GOOD 1', 'BAD 2'], labels: [true, false], firstError: 1 },
      ],
    });
    expect(report.abstained).toBe(1);
    expect(report.n).toBe(3);
    expect(report.abstainedSolutions).toBe(1);
    expect(report.first_error_accuracy).toBe(0.5);
    expect(report.replies).toBe(4);
    expect(report.formatFailures).toBe(1);
    expect(report.formatFailureRate).toBe(0.25);
  });

  it('search results that use a judge carry the share of format failures', async () => {
    const { judge } = markerJudge();
    // Candidates are drawn one request each (the nested pool): alternate across requests.
    let k = 0;
    const policy = scriptedModel((request) =>
      Array.from({ length: request.n ?? 1 }, () => ({
        text: k++ % 2 === 0 ? 'MUTE step\n\nSo the answer is \\boxed{1}.' : 'GOOD step\n\nSo \\boxed{1}.',
      })),
    );
    const problem = { id: 'p', question: 'q', answer: '1', domain: 'math' as const, source: 'test' };
    const r = await runStrategy(
      'best-of-n',
      problem,
      { ...DEFAULT_SEARCH_CONFIG, n: 2 },
      {
        policy: createPolicy(policy),
        judge,
      },
    );
    expect(r.stats.judgeReplies).toBe(4);
    expect(r.stats.formatFailures).toBe(1);
    expect(r.stats.formatFailureRate).toBe(0.25);
  });

  it('select: a response the judge said nothing about is not picked, and the failures are counted', async () => {
    const { judge } = markerJudge();
    const [row] = await selectByJudge(
      [
        {
          id: 'p',
          question: 'q',
          samples: [
            { text: 'MUTE 1\n\nMUTE 2', correct: true },
            { text: 'GOOD 1\n\nBAD 2', correct: true },
          ],
        },
      ],
      judge,
    );
    expect(row.chosen?.index).toBe(1);
    expect(row.candidates[0]).toMatchObject({ index: 0, abstained: 2 });
    expect(row.formatFailures).toBe(2);
    expect(row.judgeReplies).toBe(4);
  });
});
