import { z } from 'zod';
import { SEGMENTATIONS } from '../core/segment.js';
import { seedSetting, setting } from '../core/settings-schema.js';
import { DEFAULT_SIGNAL_PARAMS, LABEL_SIGNALS, parseSignals } from './signals.js';

/** Batch size of early stopping when none is given. */
export const DEFAULT_EARLY_STOP_BATCH = 4;

/** A signal list as typed (`abs-q,rel-ratio`), refused with the known names. */
function signalList(text: string): unknown {
  try {
    return parseSignals(text);
  } catch (e) {
    throw new RangeError((e as Error).message);
  }
}

/**
 * Every setting of rollout labeling (METHODS §2), declared once: its type, bounds, default and
 * help. `LabelConfig`, its defaults and checks (./config.ts), the flags and help of `stepwise
 * label`, `--config` replay, the settings hash and the docs/cli.md table are derived from it: a
 * field added here appears in all of them.
 */
export const LABEL_SETTINGS = z.object({
  signals: setting(z.array(z.enum(LABEL_SIGNALS)).default(['abs-q', 'rel-ratio', 'rel-effective']), {
    help: `comma-separated signals labeled from the same rollouts: ${LABEL_SIGNALS.join(', ')}`,
    arg: 'list',
    parse: signalList,
  }),
  rollouts: setting(z.number().int().min(1).optional(), {
    help: 'rollouts per prefix, M; one set of rollouts serves every signal, so the largest applies',
    arg: 'M',
    defaultText:
      "the papers': 16 (StepWiser) when any of abs-q, rel-ratio, rel-effective is asked, else 8 (Math-Shepherd N = 8, SORM K = 8)",
  }),
  gamma: setting(z.number().min(0).default(DEFAULT_SIGNAL_PARAMS.gamma), {
    help: 'rel-ratio: positive iff Q̂(i)/Q̂(i−1) > γ',
    arg: 'g',
  }),
  alpha: setting(z.number().default(DEFAULT_SIGNAL_PARAMS.alpha), {
    help: 'rel-effective: weight α of the best-of-n advantage',
    arg: 'a',
  }),
  bestOf: setting(z.number().int().min(1).default(DEFAULT_SIGNAL_PARAMS.bestOfN), {
    help: 'rel-effective: best-of-n prover size n',
    arg: 'n',
  }),
  softThreshold: setting(z.number().min(0).max(1).default(DEFAULT_SIGNAL_PARAMS.softThreshold), {
    help: 'ms-soft: Q̂ at or above which a chunk counts as positive for its first error',
    arg: 't',
  }),
  zeroOverZero: setting(z.enum(['negative', 'no-change']).default(DEFAULT_SIGNAL_PARAMS.zeroOverZero), {
    help: 'rel-ratio when Q̂(i) = Q̂(i−1) = 0: negative, or ratio 1 (no-change)',
    arg: 'rule',
  }),
  search: setting(z.enum(['linear', 'binary']).default('linear'), {
    help: 'linear: every prefix; binary: bisect for the first error (abs-q, ms-hard, sorm)',
    arg: 'mode',
  }),
  earlyStop: setting(z.union([z.boolean(), z.number().int().min(1)]).default(false), {
    help: `stop a prefix at its first correct rollout, sampling batches of this size (the flag alone: ${DEFAULT_EARLY_STOP_BATCH}; abs-q, ms-hard, sorm only)`,
    arg: 'batch',
    defaultText: 'off',
    requirement: 'true, false or a positive batch size',
  }),
  seed: seedSetting('run seed (rollouts of a prefix depend only on it and the prefix)', {
    min: 0,
    default: 0,
  }),
  temperature: setting(z.number().min(0).default(1), {
    help: 'rollout temperature (StepWiser estimates step values at T = 1)',
    arg: 't',
  }),
  maxTokens: setting(z.number().int().min(1).default(2048), {
    help: 'token budget of one rollout',
    arg: 'n',
  }),
  segmentation: setting(z.enum(SEGMENTATIONS).default('paragraph'), {
    help: "how the policy segments: paragraph (blank lines) or tags (the policy wraps each chunk in <chunk>…</chunk>); under tags, prefixes are the policy's own text up to a </chunk>",
    arg: 'mode',
    defaultText: 'what the input was sampled with, else paragraph',
  }),
  promptForm: setting(z.enum(['raw', 'chat']).default('raw'), {
    help: 'policy prompt form: raw completion or chat messages (chat continues an assistant turn)',
    arg: 'form',
  }),
  keepRollouts: setting(z.boolean().default(false), {
    help: 'keep every rollout in the output: chunks[].rollouts = [{text, correct}] (the continuations from the prefix ending after the chunk; emptyPrefixRollouts for the bare problem)',
  }),
  format: setting(z.enum(['jsonl', 'processbench']).default('jsonl'), {
    help: 'jsonl: labeled solutions; processbench: {id, generator, problem, steps, label, final_answer_correct}',
    arg: 'format',
  }),
  processbenchSignal: setting(z.enum(LABEL_SIGNALS).optional(), {
    help: 'the signal whose first error is the ProcessBench label',
    arg: 'signal',
    defaultText: 'the first of --signals',
    requirement: `one of ${LABEL_SIGNALS.join(', ')}`,
  }),
  cache: setting(z.union([z.enum(['full', 'verdicts']), z.literal(false)]).default('full'), {
    help: 'what the model-call cache keeps of each rollout: full (text), or verdicts (answer and token count only; a much smaller cache)',
    arg: 'mode',
    requirement: 'full, verdicts or false (no cache)',
    negate: 'do not read or write the model-call cache',
    runOnly: true,
  }),
  concurrency: setting(z.number().int().min(1).default(8), {
    help: 'solutions labeled at once (4× as many requests in flight)',
    arg: 'n',
    runOnly: true,
  }),
});
