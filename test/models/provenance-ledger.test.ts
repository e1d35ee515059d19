import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { JudgeCost } from '../../src/judge/common.js';
import { createJudge } from '../../src/judge/create.js';
import { wrapModel } from '../../src/models/middleware.js';
import { createPolicy } from '../../src/models/policy.js';
import { ledgerOf } from '../../src/models/simulated.js';
import { sampleProblem } from '../../src/sample/sample.js';
import { searchDataset } from '../../src/search/dataset.js';
import { boxedChecker as checker, fakeJudge, fakePolicy, fakeProblem } from '../search/fakes.js';
import { scriptedModel } from '../support/scripted-model.js';
import { where } from '../support/source-code.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 29 item 4, provenance as data: which world a row or summary came from is read from the
 * cost ledger of the work (what the models are, and replies the sim server marked), never from a
 * flag a writer computes or threads by hand.
 */

const problem: Problem = {
  id: 'p1',
  question: 'What is 1 + 1?',
  answer: '2',
  domain: 'math',
  source: 'test',
};
const unmarked = () => scriptedModel(() => [{ text: 'It is 2.\n\nThe answer is \\boxed{2}.' }]);
const marked = () =>
  scriptedModel(() => [{ text: 'It is 2.\n\nThe answer is \\boxed{2}.', simulated: true as const }]);

describe("a row's world comes from its job's ledger", () => {
  it('sample: a real-ish policy in a job whose ledger holds a sim model writes simulated rows, and not otherwise', async () => {
    const policy = createPolicy(unmarked());
    // The same job with a simulated model among its workers (a sim judge sharing the ledger).
    const simJob = ledgerOf(unmarked(), wrapModel(unmarked(), [], { world: 'sim' }));
    expect((await sampleProblem(problem, { policy, n: 1, ledger: simJob })).simulated).toBe(true);
    const realJob = ledgerOf(unmarked());
    const row = await sampleProblem(problem, { policy, n: 1, ledger: realJob });
    expect(row.simulated).toBeUndefined();
    expect([realJob.world, realJob.snapshot().policy.calls]).toEqual(['real', 1]);
    // A tiny-world policy is not the simulated world.
    const tinyJob = ledgerOf(wrapModel(unmarked(), [], { world: 'tiny' }));
    expect((await sampleProblem(problem, { policy, n: 1, ledger: tinyJob })).simulated).toBeUndefined();
    expect(tinyJob.world).toBe('tiny');
  });

  it('sample: a reply the sim server marked puts `sim` in the ledger, and the row reads it there', async () => {
    const ledger = ledgerOf(unmarked());
    const row = await sampleProblem(problem, { policy: createPolicy(marked()), n: 1, ledger });
    expect([row.simulated, ledger.world]).toEqual([true, 'sim']);
  });

  it("the judge's meter and the judge's world are its ledger's: what the model is, then its marked replies", async () => {
    const meter = new JudgeCost('real');
    meter.record({ calls: 1, promptTokens: 3, completionTokens: 4 }, 1, false, {
      samples: [{ text: 'x', finishReason: 'stop', completionTokens: 4 }],
    });
    expect(meter.world).toBe('real');
    meter.record({ calls: 1, promptTokens: 3, completionTokens: 4 }, 1, false, {
      samples: [{ text: 'x', finishReason: 'stop', completionTokens: 4, simulated: true }],
    });
    expect([meter.world, meter.cost.judge.calls]).toEqual(['sim', 2]);

    // Reached under a real-looking name, answered by the sim server: simulated once it replied.
    const judge = await createJudge('generative:openai:x', { model: marked() });
    expect([judge.world, judge.simulated]).toEqual(['real', false]);
    await judge.judge(problem, ['It is 2.']);
    expect([judge.world, judge.simulated]).toEqual(['sim', true]);

    const real = await createJudge('generative:openai:x', { model: unmarked() });
    await real.judge(problem, ['It is 2.']);
    expect([real.world, real.simulated]).toEqual(['real', false]);
    const sim = await createJudge('generative:openai:x', {
      model: wrapModel(unmarked(), [], { world: 'sim' }),
    });
    expect([sim.world, sim.simulated]).toEqual(['sim', true]);
  });
});

describe('search: a real-ish policy with a judge whose ledger says sim', () => {
  it('every row and the summary say simulated; with a real judge none does', async () => {
    const problems = [fakeProblem('p0', 3), fakeProblem('p1', 4)];
    for (const world of ['sim', 'real'] as const) {
      const out = join(tempDir('provenance-search-'), 'out.jsonl');
      const { policy } = fakePolicy({ stepError: 0.2 });
      const { judge } = fakeJudge({ sensitivity: 0.9, specificity: 0.9 });
      const { summary } = await searchDataset({
        problems,
        strategy: 'chunk-reset',
        deps: { policy, judge: { ...judge, world }, checker },
        out,
      });
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { simulated?: boolean });
      expect(
        rows.map((r) => r.simulated === true),
        world,
      ).toEqual([world === 'sim', world === 'sim']);
      expect(summary.simulated, world).toBe(world === 'sim');
    }
  });
});

describe('no writer decides "simulated" by itself (a guard over src/)', () => {
  it('what a model is, or what a reply says, is read only where it goes into a ledger', () => {
    const outside = (f: string) => !f.startsWith('models/') && !f.startsWith('sim/');
    expect(where(/\b(isSimulatedModel|worldOfModel|wroteSimulated)\(/g, outside).sort()).toEqual([
      // A rendering choice, not a marking: the simulated world reads stepwise's own prompts.
      'cli/export-run.ts',
      // The judge's meter: seeded with the world of the model it judges with.
      'judge/common.ts',
      // A probe's marked reply becomes its record's mark, which the label job puts in its ledger.
      'label/estimate.ts',
      // A search member's marked reply (the runtime's ledger records it with worldOfReply).
      'search/runtime.ts',
    ]);
  });

  it("commands read a judge's world through its ledger (isSimulatedJudge, judge.world), not its flag", () => {
    expect(where(/\bjudge\??\.simulated\b/g, (f) => f.startsWith('cli/') || f.startsWith('search/'))).toEqual(
      [],
    );
  });

  it('the job runners take a ledger, not a "simulated" option', () => {
    for (const file of ['label/job.ts', 'sample/sample.ts'])
      expect(
        where(/^\s*simulated\?: boolean;/gm, (f) => f === file),
        file,
      ).toEqual([]);
  });
});
