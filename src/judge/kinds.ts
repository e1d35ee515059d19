import { CRITIC_KIND } from './critic.js';
import { GENERATIVE_KIND } from './generative.js';
import { ORM_KIND } from './orm.js';
import { PRM_KIND } from './prm.js';
import { ROLLOUT_KIND } from './rollout.js';
import { SHEPHERD_KIND } from './shepherd.js';
import type { JudgeKindDefinition } from './types.js';

/**
 * Every kind of judge a spec can name, one line each (each declared beside its algorithm): spec
 * parsing, validation of the query, `createJudge`, `--help` and the tables of docs/judges.md all
 * read this list. Adding a kind is its file and one line here (docs/extending.md).
 */
export const JUDGE_KIND_DEFINITIONS = [
  GENERATIVE_KIND,
  PRM_KIND,
  SHEPHERD_KIND,
  CRITIC_KIND,
  ROLLOUT_KIND,
  ORM_KIND,
] as const satisfies readonly JudgeKindDefinition[];
