import { describe, expect, it } from 'vitest';
import { createJudge } from '../../src/judge/create.js';
import { createPolicy } from '../../src/models/policy.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { runStrategy } from '../../src/search/registry.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { providers } from '../support/providers.js';
import { scriptedModel } from '../support/scripted-model.js';

describe('search results keep the judge rationale (for the web view)', () => {
  it('chunk-reset chunks and trace nodes carry the generative judge analysis', async () => {
    const policy = createPolicy(createSimModel('sim', PROMPT_READERS));
    const judge = await createJudge('sim:generative', { providers });
    const [problem] = simDatasetProblems(1, { seed: 3 });
    const result = await runStrategy('chunk-reset', problem, {}, { policy, judge });
    expect(result.chunks.length).toBeGreaterThan(0);
    for (const c of result.chunks) {
      expect(c.rationale, `chunk ${c.index}`).toMatch(/\\boxed\{(Positive|Negative)\}/);
    }
    const judged = result.trace.filter((n) => n.text !== '' && n.verdict !== undefined);
    expect(judged.every((n) => typeof n.rationale === 'string' && n.rationale.length > 0)).toBe(true);
  });
});

describe('chunk-reset does not re-judge an identical regenerated chunk', () => {
  it('judge calls = distinct attempts; repeats are counted', async () => {
    const { emptyCost } = await import('../../src/core/cost.js');
    // A policy that always writes the same first chunk, then the answer; a judge that rejects it.
    let judgeCalls = 0;
    const model = scriptedModel(() => [{ text: 'x = 2', stopReason: '\n\n', completionTokens: 3 }], {
      provider: 'scripted',
      modelId: 'same',
      capabilities: { logprobs: false },
      promptTokens: () => 5,
    });
    const judge = {
      name: 'rejects-all',
      scalar: false,
      async judge(_p: unknown, chunks: readonly string[]) {
        judgeCalls++;
        return {
          judgments: [{ chunkIndex: chunks.length - 1, verdict: 'negative' as const, score: 0.1 }],
          firstError: chunks.length - 1,
          cost: emptyCost(),
          formatFailures: 0,
        };
      },
    };
    const [problem] = simDatasetProblems(1, { seed: 1 });
    const result = await runStrategy(
      'chunk-reset',
      problem,
      { maxAttempts: 5, maxSteps: 1 },
      { policy: createPolicy(model), judge },
    );
    expect(judgeCalls).toBe(1);
    expect(result.stats.repeatedAttempts).toBe(4);
    expect(result.trace.filter((n) => n.depth === 0)).toHaveLength(5);
  });
});
