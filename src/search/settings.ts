import { z } from 'zod';
import { SEGMENTATIONS } from '../core/segment.js';
import { seedSetting, setting } from '../core/settings-schema.js';

/** How step scores become one solution score (METHODS §5, search-and-learn `utils/score.py`). */
export const AGGREGATIONS = ['last', 'min', 'product', 'mean'] as const;

/**
 * The settings every search strategy shares (sampling, budgets, how steps are cut and judged),
 * declared once with their bounds, defaults and help. Each strategy declares its own settings
 * next to its algorithm (`BEAM_SETTINGS` in ./beam.ts, …); the registry (./registry.ts) joins
 * them into `SEARCH_SETTINGS`, from which `SearchConfig`, its defaults and checks, the flags of
 * `stepwise search`, `solve` and `bench search`, `--config` replay, the settings hash and the
 * docs/cli.md table are derived. Defaults: StepWiser (T = 1), search-and-learn (N = 8), the limits
 * of step-wise searches chosen here.
 */
export const SHARED_SEARCH_SETTINGS = z.object({
  seed: seedSetting('seed of every sampled call, policy and judge: same seed, same run', {
    min: 0,
    default: 0,
  }),
  temperature: setting(z.number().min(0).max(10).default(1), {
    help: 'policy temperature (StepWiser estimates step values at T = 1; search-and-learn samples at 0.8)',
    arg: 't',
  }),
  topP: setting(z.number().min(0).max(1).default(1), {
    help: 'policy nucleus mass (1 = off)',
    arg: 'p',
  }),
  maxTokens: setting(z.number().int().min(1).default(2048), {
    help: 'tokens of one whole-solution call (sample, majority, best-of-n, weighted-vote, refine)',
    arg: 't',
  }),
  maxStepTokens: setting(z.number().int().min(1).default(512), {
    help: 'tokens of one step call (beam, greedy-prm, chunk-reset)',
    arg: 't',
  }),
  maxSteps: setting(z.number().int().min(1).default(40), {
    help: 'most chunks in a step-wise solution before the search stops',
    arg: 'k',
  }),
  n: setting(z.number().int().min(1).default(8), {
    help: 'the budget N: solutions of majority, best-of-n and weighted-vote, beams of beam',
    arg: 'N',
  }),
  aggregation: setting(z.enum(AGGREGATIONS).default('min'), {
    help: 'step scores → solution score (best-of-n, weighted-vote, beam)',
    arg: 'how',
  }),
  positiveAt: setting(z.number().min(0).max(1).optional(), {
    help: 'greedy-prm, chunk-reset: a step score ≥ s is positive (set with --negative-below)',
    arg: 's',
    defaultText: "the judge's own verdict",
  }),
  negativeBelow: setting(z.number().min(0).max(1).optional(), {
    help: 'greedy-prm, chunk-reset: a step score < s is negative; between the two is neutral',
    arg: 's',
    defaultText: "the judge's own verdict",
  }),
  judgeVotes: setting(z.number().int().min(1).optional(), {
    help: 'sampled judgments per chunk asked of the judge',
    arg: 'k',
    defaultText: "the judge spec's votes, else 1 (StepWiser)",
  }),
  segmentation: setting(z.enum(SEGMENTATIONS).default('paragraph'), {
    help: 'how the policy segments its solution: paragraph (blank lines) or tags (the policy wraps each chunk in <chunk>…</chunk>, step calls stop at </chunk> and judges see tagged chunks)',
    arg: 'mode',
  }),
});

/** The step separator of `paragraph` segmentation: a library setting (the stop string of step calls), not a flag. */
export const DEFAULT_STEP_SEPARATOR = '\n\n';

/** The shared settings, resolved, and the step separator: what the runtime and the domains read. */
export type SharedSearchConfig = z.output<typeof SHARED_SEARCH_SETTINGS> & {
  /** Step separator: the stop string of step calls under `paragraph` segmentation. */
  stepSeparator: string;
};

/** The fields a settings schema outputs (an empty schema's `Record<string, never>` is none). */
export type SettingsOutput<S extends z.ZodObject> = {
  [K in keyof z.output<S> as string extends K ? never : K]: z.output<S>[K];
};

/** What a strategy reads: the shared settings and its own (`S`, declared in its file). */
export type StrategyConfig<S extends z.ZodObject> = SharedSearchConfig & SettingsOutput<S>;
