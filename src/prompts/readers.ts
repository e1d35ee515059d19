import { criticPromptReader } from './critic.js';
import { judgePromptReader } from './judge.js';
import { ormPromptReader } from './orm.js';
import { policyPromptReader } from './policy.js';
import { qwenPrmInputReader } from './prm.js';
import type { PromptReaders } from './protocol.js';
import { refinePromptReader } from './refine.js';

/**
 * Every prompt family the simulated world answers, in the order a request is tried: the strict
 * readers (a fixed head, or head and tail) first, the judge's (sections found anywhere) last
 * among the generate readers. The composition root hands this list to the sim.
 */
export const PROMPT_READERS: PromptReaders = [
  policyPromptReader,
  refinePromptReader,
  criticPromptReader,
  ormPromptReader,
  judgePromptReader,
  qwenPrmInputReader,
];
