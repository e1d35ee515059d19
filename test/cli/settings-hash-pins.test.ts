import { describe, expect, it } from 'vitest';
import { labelCodeJobSettings, resolveLabelCodeConfig } from '../../src/code/config.js';
import { resolveSampleConfig, sampleJobSettings } from '../../src/sample/config.js';
import { resolveSelectConfig, selectJobSettings } from '../../src/train/select-config.js';

/**
 * The settings hashes `sample`, `select` and `label-code` recorded before their settings became
 * schemas (issue 29), each taken from the first row the old commands wrote (commit c4851ae) with
 * these flags: the same settings must give the same hash, so an old output resumes and is neither
 * refused nor redone. Run-only settings (concurrency) are given too: they must stay out of it.
 */
const MBPP = '/work/shared/data/mbpp/mbpp.jsonl';

describe('settings hashes of outputs made before the schemas', () => {
  it('sample: defaults; steps + chat + top-p + seed; tags', () => {
    const sim = { dataset: 'sim', simSeed: 0, policy: 'sim' };
    expect(sampleJobSettings(resolveSampleConfig({ n: 2 }), sim).hash).toBe('e7e590b1e81276ef');
    const tuned = resolveSampleConfig({
      ...{ n: 3, segmentation: 'steps', promptForm: 'chat', topP: 0.9, seed: 7 },
      ...{ temperature: 0.7, maxTokens: 512, concurrency: 3 },
    });
    expect(sampleJobSettings(tuned, sim).hash).toBe('113a87633eeeca48');
    expect(sampleJobSettings(resolveSampleConfig({ n: 1, segmentation: 'tags' }), sim).hash).toBe(
      'a2e90fc21c0315de',
    );
  });

  it('select: default seed; seed 5 with another concurrency', () => {
    const judge = { judge: 'sim:generative' };
    expect(selectJobSettings(resolveSelectConfig({}), judge).hash).toBe('4ae50a9befefb126');
    expect(selectJobSettings(resolveSelectConfig({ seed: 5, concurrency: 2 }), judge).hash).toBe(
      'e5be87a74583b8d7',
    );
  });

  it('label-code: defaults; lines, no reference, every number changed, a split', () => {
    expect(labelCodeJobSettings(resolveLabelCodeConfig({}), { dataset: 'mbpp', path: MBPP }).hash).toBe(
      '8689b9eb59990a52',
    );
    const tuned = resolveLabelCodeConfig({
      ...{ segmentation: 'lines', reference: false, seed: 4, mutantsPerProblem: 2 },
      ...{ maxAttempts: 9, timeoutMs: 3000, concurrency: 1 },
    });
    expect(labelCodeJobSettings(tuned, { dataset: 'mbpp', path: MBPP, split: 'test' }).hash).toBe(
      '72788cb59701a1ed',
    );
  });

  it('a required setting left out, or a bad value, is refused naming the field', () => {
    expect(() => resolveSampleConfig({})).toThrow(/sample config: n is required \(a positive integer\)/);
    expect(() => resolveLabelCodeConfig({ timeoutMs: 5 })).toThrow(
      /label-code config: timeoutMs must be an integer ≥ 100 \(got 5\)/,
    );
    expect(() => resolveSelectConfig({ concurrency: 0 })).toThrow(
      /select config: concurrency must be a positive integer/,
    );
  });
});
