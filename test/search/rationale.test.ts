import { describe, expect, it } from 'vitest';
import { createJudge } from '../../src/judge/create.js';
import { createPolicy } from '../../src/models/policy.js';
import { runStrategy } from '../../src/search/registry.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';

describe('search results keep the judge rationale (for the web view)', () => {
  it('chunk-reset chunks and trace nodes carry the generative judge analysis', async () => {
    const policy = createPolicy(createSimModel('sim'));
    const judge = await createJudge('sim:generative');
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
