import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { flagName } from '../../src/jobs/settings.js';
import {
  DEFAULT_LABEL_CONFIG,
  LABEL_CONFIG_KEYS,
  type LabelConfig,
  labelJobSettings,
  resolveLabelConfig,
} from '../../src/label/config.js';

describe('resolveLabelConfig: one config of rollout labeling, defaults filled, every field checked', () => {
  it('fills the documented defaults', () => {
    expect(resolveLabelConfig()).toEqual({
      signals: ['abs-q', 'rel-ratio', 'rel-effective'],
      rollouts: 16,
      gamma: 0.8,
      alpha: 0.4,
      bestOf: 4,
      softThreshold: 0.5,
      zeroOverZero: 'negative',
      search: 'linear',
      earlyStop: false,
      seed: 0,
      temperature: 1,
      maxTokens: 2048,
      segmentation: 'paragraph',
      promptForm: 'raw',
      keepRollouts: false,
      format: 'jsonl',
      cache: 'full',
      concurrency: 8,
    });
    // Every field has a key in the list the CLI and the recorded settings walk.
    expect([...LABEL_CONFIG_KEYS].sort()).toEqual(
      [...Object.keys(DEFAULT_LABEL_CONFIG), 'rollouts', 'processbenchSignal'].sort(),
    );
  });

  it("rollouts default to the papers' for the signals; segmentation and prompt form to the context's", () => {
    expect(resolveLabelConfig({ signals: ['ms-hard', 'sorm'] }).rollouts).toBe(8);
    expect(resolveLabelConfig({ signals: ['ms-hard', 'abs-q'] }).rollouts).toBe(16);
    expect(resolveLabelConfig({ signals: ['sorm'], rollouts: 3 }).rollouts).toBe(3);
    const c = resolveLabelConfig({}, { segmentation: 'tags', promptForm: 'chat' });
    expect([c.segmentation, c.promptForm]).toEqual(['tags', 'chat']);
    expect(resolveLabelConfig({ segmentation: 'paragraph' }, { segmentation: 'tags' }).segmentation).toBe(
      'paragraph',
    );
    // An unset (undefined) field takes its default, as an absent one does.
    expect(resolveLabelConfig({ gamma: undefined, signals: ['abs-q', 'abs-q'] })).toMatchObject({
      gamma: 0.8,
      signals: ['abs-q'],
    });
  });

  const refused: Array<[Partial<LabelConfig> | Record<string, unknown>, RegExp]> = [
    [{ rollouts: 0 }, /label config: rollouts must be a positive integer \(got 0\)/],
    [{ rollouts: 2.5 }, /rollouts must be a positive integer/],
    [{ signals: [] }, /signals must list at least one signal/],
    [{ signals: ['abs-q', 'nope'] as never }, /signals must be among .*\(got "nope"\)/],
    [{ gamma: -1 }, /gamma must be a number ≥ 0/],
    [{ alpha: Number.NaN }, /alpha must be a number/],
    [{ bestOf: 0 }, /bestOf must be a positive integer/],
    [{ softThreshold: 1.5 }, /softThreshold must be a number between 0 and 1/],
    [{ zeroOverZero: 'zero' as never }, /zeroOverZero must be negative or no-change/],
    [{ search: 'ternary' as never }, /search must be linear or binary/],
    [{ earlyStop: 0 }, /earlyStop must be true, false or a positive batch size/],
    [{ seed: -1 }, /seed must be an integer ≥ 0/],
    [{ temperature: -0.5 }, /temperature must be a number ≥ 0/],
    [{ maxTokens: 0 }, /maxTokens must be a positive integer/],
    [{ segmentation: 'lines' as never }, /segmentation must be paragraph or tags/],
    [{ promptForm: 'xml' as never }, /promptForm must be raw or chat/],
    [{ keepRollouts: 'yes' as never }, /keepRollouts must be true or false/],
    [{ format: 'csv' as never }, /format must be jsonl or processbench/],
    [{ cache: 'some' as never }, /cache must be full, verdicts or false/],
    [{ concurrency: 0 }, /concurrency must be a positive integer/],
    [{ processbenchSignal: 'x' as never }, /processbenchSignal must be one of/],
    [{ rolouts: 8 }, /unknown field "rolouts"/],
    // Together.
    [{ search: 'binary' }, /binary .*decides only abs-q, ms-hard, sorm; not rel-ratio, rel-effective/],
    [{ signals: ['abs-q', 'ms-soft'], earlyStop: true }, /earlyStop decides only .*ms-soft need all M/],
    [
      { format: 'processbench', processbenchSignal: 'sorm' },
      /processbenchSignal sorm is not among .*signals/,
    ],
    [{ keepRollouts: true, cache: 'verdicts' }, /keepRollouts needs rollout texts/],
  ];
  it.each(refused)('refuses %j naming the field', (partial, message) => {
    expect(() => resolveLabelConfig(partial as Partial<LabelConfig>)).toThrow(UsageError);
    expect(() => resolveLabelConfig(partial as Partial<LabelConfig>)).toThrow(message);
  });

  it('accepts what the flags allow: binary search and early stop on any-correct signals, a batch size', () => {
    const c = resolveLabelConfig({ signals: ['abs-q', 'sorm'], search: 'binary', earlyStop: 2 });
    expect([c.search, c.earlyStop, c.rollouts]).toEqual(['binary', 2, 16]);
    expect(resolveLabelConfig({ keepRollouts: true, cache: false }).cache).toBe(false);
  });

  it('the CLI names its flags in the errors', () => {
    expect(() => resolveLabelConfig({ bestOf: 0 }, { nameOf: flagName })).toThrow(
      /^--best-of must be a positive integer \(got 0\)$/,
    );
    expect(() => resolveLabelConfig({ signals: ['ms-soft'], earlyStop: 4 }, { nameOf: flagName })).toThrow(
      /^--early-stop decides only/,
    );
  });
});

describe('labelJobSettings: what a label job records', () => {
  it('records the row settings of the config and the context, not concurrency or the cache mode', () => {
    const a = labelJobSettings(resolveLabelConfig(), { policy: 'sim' });
    const b = labelJobSettings(resolveLabelConfig({ concurrency: 1, cache: 'verdicts' }), { policy: 'sim' });
    expect(b.hash).toBe(a.hash);
    expect(a.settings).not.toHaveProperty('cache');
    expect(a.settings).not.toHaveProperty('concurrency');
    expect(labelJobSettings(resolveLabelConfig({ seed: 1 }), { policy: 'sim' }).hash).not.toBe(a.hash);
    expect(() => labelJobSettings(resolveLabelConfig(), { seed: 3 })).toThrow(/belongs to the config/);
  });

  it('keeps the keys and hash outputs were recorded with before the config existed, so they still resume', () => {
    // The settings `stepwise label --input S --dataset sim --policy sim` recorded before label/config.ts,
    // copied from such an output's `job` field.
    const recorded = {
      command: 'label',
      hash: 'c347c2d6f4162534',
      settings: {
        alpha: 0.4,
        bestOf: 4,
        dataset: 'sim',
        earlyStop: false,
        format: 'jsonl',
        gamma: 0.8,
        keepRollouts: false,
        maxTokens: 2048,
        policy: 'sim',
        promptForm: 'raw',
        rollouts: 16,
        search: 'linear',
        seed: 0,
        segmentation: 'paragraph',
        signals: ['abs-q', 'rel-ratio', 'rel-effective'],
        simSeed: 0,
        softThreshold: 0.5,
        temperature: 1,
        zeroOverZero: 'negative',
      },
    };
    expect(labelJobSettings(resolveLabelConfig(), { dataset: 'sim', simSeed: 0, policy: 'sim' })).toEqual(
      recorded,
    );
    // `--early-stop` alone recorded true, `--early-stop 3` the batch size: both still do.
    const early = resolveLabelConfig({ signals: ['abs-q'], earlyStop: true });
    expect(labelJobSettings(early, {}).settings.earlyStop).toBe(true);
  });
});
