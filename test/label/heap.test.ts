import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateResult, LanguageModel } from '../../src/core/model.js';
import type { Problem } from '../../src/core/types.js';
import { runLabelJob } from '../../src/label/job.js';
import type { SolutionToLabel } from '../../src/label/label.js';
import { createPolicy } from '../../src/models/policy.js';
import { liveHeapBytes } from '../support/heap.js';
import { POLICY_CAPABILITIES } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';
import { boxedChecker } from './fake-model.js';

/**
 * Issue 17: memory of `label` is bounded by its concurrency, not by the size of the job. Nothing
 * here keeps what it is given: the model answers without logging requests, and the solutions
 * are made one at a time as the job pulls them.
 */

const CHUNK = 40_000;

function* solutions(count: number): Generator<SolutionToLabel> {
  for (let i = 0; i < count; i++) {
    const problem: Problem = {
      id: `q${i}`,
      question: `Problem ${i}: what is 6 × 7?`,
      answer: '42',
      domain: 'math',
      source: 'test',
    };
    const chunks = Array.from({ length: 5 }, (_, c) => `step ${c + 1} of ${i}: ${'x'.repeat(CHUNK)}`);
    chunks.push('So the answer is \\boxed{42}.');
    yield { id: `s${i}`, problem, chunks };
  }
}

const model: LanguageModel = {
  specificationVersion: 'v1',
  provider: 'test',
  modelId: 'heap',
  capabilities: POLICY_CAPABILITIES,
  async generate(request): Promise<GenerateResult> {
    const n = request.n ?? 1;
    return {
      samples: Array.from({ length: n }, (_, j) => ({
        text: j % 2 === 0 ? 'So \\boxed{42}.' : 'So \\boxed{41}.',
        finishReason: 'stop' as const,
        completionTokens: 4,
      })),
      usage: { calls: 1, promptTokens: 10, completionTokens: 4 * n },
      warnings: [],
    };
  },
};

describe('label memory', () => {
  it('keeps neither records nor the texts of the prefixes it estimated: live heap grows by far less than the output', async () => {
    const out = join(tempDir('stepwise-label-heap-'), 'out.jsonl');
    const count = 80;
    const before = liveHeapBytes();
    // Measured as the last record is written, while the job (and all it keeps) is still alive.
    let atEnd = 0;
    const summary = await runLabelJob({
      solutions: solutions(count),
      total: count,
      policy: createPolicy(model),
      checker: boxedChecker,
      out,
      config: { rollouts: 2, signals: ['abs-q'], concurrency: 4 },
      onProgress: (p) => {
        if (p.done === count) atEnd = liveHeapBytes();
      },
    });
    const grown = atEnd - before;
    const written = statSync(out).size;
    expect(summary.solutions).toBe(count);
    expect(atEnd).toBeGreaterThan(0);
    // Each record carries its chunks (~200 KB); the prefixes rolled out from hold ~0.5 MB of text
    // per solution — what an estimate memo keyed by the prompt's text would keep alive.
    expect(written).toBeGreaterThan(count * 5 * CHUNK);
    // In flight: a few solutions (concurrency 4) and their prompts, ~1.5 MB whatever the job's size.
    expect(grown).toBeLessThan(written / 5);
  }, 60_000);
});
