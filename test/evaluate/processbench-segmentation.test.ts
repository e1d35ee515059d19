import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProcessBenchRecord } from '../../src/data/types.js';
import { runProcessBench } from '../../src/evaluate/processbench.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { scriptedModel } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';

/**
 * `eval processbench --segmentation tags`: a generative judge is shown the earlier steps as the
 * policy's `<chunk>`s (as a policy that wrote tags wrote them), not as `[Step i]` blocks; the
 * layout is part of the predictions' settings.
 */

const dir = tempDir('stepwise-pb-seg-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row: ProcessBenchRecord = {
  id: 'r0',
  subset: 'tiny',
  generator: 'test',
  problem: 'Start with 16. Multiply by 3, then subtract 9. What is the final number?',
  steps: ['16×3=48', '48-9=39 \\boxed{39}'],
  final_answer_correct: true,
  label: -1,
};

describe('ProcessBench with a generative judge under a segmentation', () => {
  it.each([
    ['tags', '<chunk>16×3=48</chunk>', '[Step 1]'],
    [undefined, '[Step 1]\n16×3=48', '<chunk>'],
  ] as const)('segmentation %s shows the history as %j', async (segmentation, shown, absent) => {
    const model = scriptedModel(() => [{ text: '\\boxed{Positive}' }]);
    const report = await runProcessBench({
      judge: createGenerativeJudge(model),
      samples: [row],
      predictionsPath: join(dir, `${segmentation ?? 'paragraph'}.jsonl`),
      fresh: true,
      segmentation,
    });
    expect(report.samples).toBe(1);
    expect(model.requests).toHaveLength(2);
    const second = model.requests[1].messages!.find((m) => m.role === 'user')!.content;
    expect(second).toContain(shown);
    expect(second).not.toContain(absent);
  });
});
