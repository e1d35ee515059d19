import type { z } from 'zod';
import type { LanguageModel, World } from '../core/model.js';
import type { Segmentation } from '../core/segment.js';
import type { SettingsSchema } from '../core/settings-schema.js';
import type { Cost, Judgment, Problem } from '../core/types.js';
import type { AnswerChecker } from '../label/estimate.js';

/**
 * One judge interface (METHODS §3): anything that gives each chunk of a solution a verdict and a
 * score in [0, 1] — generative stepwise judges, discriminative PRMs, critics, rollout judges,
 * outcome models, simulated judges.
 */
export interface JudgeOptions {
  /** Sampled judgments per chunk (k votes); score = share of Positive. Default 1. */
  votes?: number;
  /** Stop at the first negative chunk (enough to predict a first error). */
  firstErrorOnly?: boolean;
  /** Only judge these chunk indices (e.g. the newest chunk during search). Default: all. */
  only?: number[];
  signal?: AbortSignal;
  seed?: number;
  /** How the chunks were segmented: judges that show previous chunks show them in this form (default paragraph). */
  segmentation?: Segmentation;
}

export interface JudgeResult {
  /** One judgment per judged chunk, in chunk order. With `firstErrorOnly`, none after the first negative. */
  judgments: Judgment[];
  /**
   * The predicted first error: index of the first negative chunk, −1 when none. Critics predict
   * it directly; score-based judges derive it from scores and their threshold.
   */
  firstError: number;
  cost: Cost;
  /** Judge replies whose verdict could not be parsed (counted, never thrown). */
  formatFailures: number;
  /**
   * Judge replies read for verdicts (parsed or not): the denominator of the format-failure share.
   * Counted whether the reply came from the model or its cache. Absent: read it with
   * `repliesOf` (one per vote of each judgment).
   */
  replies?: number;
  /**
   * The first judged chunk on which the judge gave no parsable verdict (every vote a format
   * failure), when there is one: an abstention on that chunk, never a "no error".
   */
  abstainedAt?: number;
  /**
   * True when the judge gave no usable first-error answer: a critic whose every sample was
   * unparsable, or a step judge that abstained on a chunk before its first negative one (so its
   * first error could lie there). `firstError` is then not a claim about the solution:
   * ProcessBench scoring counts such a sample as a miss.
   */
  abstained?: boolean;
  /** One score in [0, 1] for the whole solution, from judges that give one (outcome models, critics). */
  solutionScore?: number;
}

export interface StepJudge {
  /** The spec it was built from, e.g. `generative:openai:Qwen2.5-7B` or `sim:generative?sens=0.9`. */
  readonly name: string;
  /** True for judges whose scores are calibrated to a threshold (scalar PRMs), false for verdict judges. */
  readonly scalar: boolean;
  /**
   * The threshold that turns scores into verdicts (a chunk is negative when its score is below it).
   * Scalar judges can be re-thresholded after the fact (ProcessBench `--threshold auto`).
   */
  readonly threshold?: number;
  /**
   * True when the judge is the simulated world (a `sim` model, in process or behind `stepwise sim
   * serve`): its numbers describe the simulator, never a real model, and reports must say so.
   */
  readonly simulated?: boolean;
  /**
   * The least real world of the judge's work so far (`sim` once a reply was the simulated
   * world's), read from the judge's cost ledger; `simulated` is `world === 'sim'`.
   */
  readonly world?: World;
  /** The model it asks (set by `createJudge`): read for its cache counters, never called directly. */
  readonly model?: LanguageModel;
  judge(problem: Problem, chunks: readonly string[], options?: JudgeOptions): Promise<JudgeResult>;
  /** Release the underlying model (sockets, native handles). */
  close?(): Promise<void>;
}

/** What every judge kind's factory is given besides its settings. */
export interface JudgeKindContext {
  /** The spec the judge was built from: its name. */
  name: string;
  /** Base seed of the judge's requests. */
  seed?: number;
  /** Rollout judge: the answer checker (default: math answer equivalence). */
  checker?: AnswerChecker;
  /** Critic: prompt template with `{problem}` and `{tagged_response}` slots, sent verbatim. */
  criticTemplate?: string;
}

/**
 * A kind of judge, declared once beside its algorithm: the name a spec gives it
 * (`<kind>:<model spec>`), one line of help, the settings a spec's query may carry (a schema:
 * types, bounds, defaults and help, see src/core/settings-schema.ts), and how it is built.
 * src/judge/kinds.ts lists the kinds; parsing, validation, help and docs/judges.md follow.
 */
export interface JudgeKindDefinition<S extends SettingsSchema = SettingsSchema> {
  kind: string;
  /** One line for `--help` and the docs. */
  help: string;
  /** The query keys of its spec (field `topP` is key `top_p`; camelCase is accepted too). */
  settings: S;
  /**
   * Options of `createJudge` (a CLI flag) that set a field of another name here: the rollout
   * judge's `maxTokens` is its `rolloutTokens`.
   */
  aliases?: Readonly<Record<string, string>>;
  create(model: LanguageModel, settings: z.output<S>, context: JudgeKindContext): StepJudge;
}

/** A judge kind, its settings typed by its schema. */
export function defineJudgeKind<S extends SettingsSchema>(
  kind: JudgeKindDefinition<S>,
): JudgeKindDefinition<S> {
  return kind;
}
