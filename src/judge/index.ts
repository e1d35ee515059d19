/**
 * Judges: anything that gives each chunk of a solution a verdict and a score (METHODS §3). Build
 * them with {@link createJudge} from a spec; see docs/judges.md.
 */
export { DEFAULT_THRESHOLD, JudgeCost } from './common.js';
export { type CreateJudgeOptions, createJudge } from './create.js';
export { type CriticJudgeSettings, type CriticVote, createCriticJudge, voteCritic } from './critic.js';
export {
  createGenerativeJudge,
  type GenerativeJudgeSettings,
  judgmentFromVotes,
  tallyVerdicts,
} from './generative.js';
export { JUDGE_KIND_DEFINITIONS } from './kinds.js';
export { createOrmJudge, type OrmJudgeSettings } from './orm.js';
export { createPoolingPrmJudge, type PoolingPrmSettings, rewardsFromPoolingRows } from './prm.js';
export { createRolloutJudge, type RolloutJudgeSettings } from './rollout.js';
export { createShepherdJudge, type ShepherdPrmSettings, shepherdScoreFromTop } from './shepherd.js';
export {
  JUDGE_KIND_HELP,
  JUDGE_KINDS,
  JUDGE_OPTION_KEYS,
  type JudgeKind,
  type JudgeSpec,
  judgeKindOf,
  parseJudgeSpec,
} from './spec.js';
export type * from './types.js';
