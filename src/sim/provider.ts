import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';
import type { ModelProvider } from '../models/registry.js';
import type { PromptReaders } from '../prompts/protocol.js';
import { createSimModel } from './model.js';
import { DEFAULT_SIM_OPTIONS as D, SIM_PRM_TARGETS } from './options.js';

const p = (help: string, value: number) => setting(z.number().min(0).max(1).default(value), { help });

/**
 * The knobs of the simulated world a `sim?key=value&…` spec sets (docs/sim.md explains each).
 * The sim reads its spec itself (`parseSimSpec`, which also serves the sim server's model field);
 * this schema is what the registry checks a spec's query against and what docs/models.md lists.
 */
export const SIM_SETTINGS = z.object({
  seed: seedSetting('seed of everything a request does not seed (problem sets, unseeded requests)', {
    default: D.seed,
  }),
  minSteps: setting(z.number().int().min(1).default(D.minSteps), {
    help: 'fewest operations in a generated problem',
  }),
  maxSteps: setting(z.number().int().min(1).max(40).default(D.maxSteps), {
    help: 'most operations in a generated problem (at least min_steps)',
  }),
  stepError: p('base step-error rate of the policy', D.stepError),
  difficultySpread: setting(z.number().min(0).max(5).default(D.difficultySpread), {
    help: 'spread of per-problem difficulty',
  }),
  misconception: p('share of step errors that are recurring misconceptions', D.misconception),
  recur: p("probability of falling into a trap step's misconception again", D.recur),
  judgeDifficulty: setting(z.number().min(0).max(5).default(D.judgeDifficulty), {
    help: 'how judge errors grow with step difficulty (0: the same everywhere)',
  }),
  checkRate: p('probability of a check chunk after an operation', D.checkRate),
  catchRate: p('probability that a check catches an existing error', D.catchRate),
  falseAlarm: p('probability that a check wrongly "corrects" a right number', D.falseAlarm),
  restateRate: p('probability of a restatement chunk before an operation', D.restateRate),
  sensitivity: p('generative judge: P(Negative | chunk wrong)', D.sensitivity),
  specificity: p('generative judge: P(Positive | chunk right)', D.specificity),
  formatFailure: p('generative judge and critic: probability of a reply without a verdict', D.formatFailure),
  criticAccuracy: p('critic: probability of naming the true earliest wrong paragraph', D.criticAccuracy),
  prmNoise: setting(z.number().min(0).default(D.prmNoise), {
    help: "PRM: standard deviation of the noise on the score's logit",
  }),
  prm: setting(z.enum(SIM_PRM_TARGETS as [string, ...string[]]).default(D.prmTarget), {
    help: 'PRM: what the score tracks (`oracle` reads exact values: an oracle, not a model)',
  }),
  prmSensitivity: p('PRM: P(a wrong chunk is perceived wrong)', D.prmSensitivity),
  prmSpecificity: p('PRM: P(a right chunk is perceived right)', D.prmSpecificity),
  ormSensitivity: p('outcome model: P(Incorrect | final answer wrong)', D.ormSensitivity),
  ormSpecificity: p('outcome model: P(Correct | final answer right)', D.ormSpecificity),
  judge: setting(z.enum(['perfect']).optional(), {
    help: '`perfect`: judge sensitivity and specificity 1, no format failures',
  }),
});

/** Short query keys of the sim's settings. */
const SIM_ALIASES: Record<string, string> = {
  sens: 'sensitivity',
  spec: 'specificity',
  format_fail: 'formatFailure',
  critic_acc: 'criticAccuracy',
  prm_sens: 'prmSensitivity',
  prm_spec: 'prmSpecificity',
  orm_sens: 'ormSensitivity',
  orm_spec: 'ormSpecificity',
};

/**
 * `sim[:name][?key=value&…]`: the simulated world in process, reading requests with `readers`
 * (the composition root hands it `PROMPT_READERS`). Not cached: a call costs less than a cache
 * lookup.
 */
export function createSimProvider(readers: PromptReaders): ModelProvider<typeof SIM_SETTINGS> {
  return {
    usage: 'sim[:name][?key=value&…]',
    description: 'the simulated world in process (src/sim, docs/sim.md): every number it gives is simulated',
    settings: SIM_SETTINGS,
    aliases: SIM_ALIASES,
    cached: false,
    world: () => 'sim',
    // The sim's own reader takes the whole spec (the registry has checked its query).
    create: (spec) => createSimModel(spec.spec, readers),
  };
}
