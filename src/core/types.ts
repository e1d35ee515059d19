/**
 * The data model every layer shares: problems, solutions split into chunks, rollouts,
 * judgments and cost. Plain data only — no behaviour — so it serialises to JSON as is.
 */

/** What kind of answer a problem has: a math answer checked by equivalence, or code checked by tests. */
export type Domain = 'math' | 'code';

/** One problem of a data set (or of the simulated world). */
export interface Problem {
  /** Stable id, unique within its source (e.g. `gsm8k/test/17`, `HumanEval/3`). */
  id: string;
  /** The question as shown to a policy. */
  question: string;
  /** Gold answer, normalised (GSM8K `#### n` → `n`; MATH → last `\boxed{}` content). For code, the test code. */
  answer: string;
  domain: Domain;
  /** Which data set or generator it came from (`gsm8k`, `math500`, `sim`, …). */
  source: string;
  /** Anything else the source provides (level, subject, entry point, tests, …). */
  meta?: Record<string, unknown>;
}

/** Half-open character range `[start, end)` into a solution's text. */
export interface Span {
  start: number;
  end: number;
}

/** One step of a solution. `text` is `solution.text.slice(span.start, span.end)`, trimmed of separators. */
export interface Chunk {
  index: number;
  text: string;
  span: Span;
}

/** A full solution to a problem, split into chunks. */
export interface Solution {
  text: string;
  chunks: Chunk[];
  /** The extracted final answer, or null when none could be found. */
  answer: string | null;
  /** Whether the final answer matches the gold answer, when it has been checked. */
  correct?: boolean;
}

/** One continuation sampled from the prefix that ends after chunk `afterChunk` (−1 = empty prefix). */
export interface Rollout {
  afterChunk: number;
  text: string;
  answer: string | null;
  correct: boolean;
  tokens: number;
}

/** A judge's ruling on one chunk. `neutral` is used by three-way PRMs (HGS-PRM, PRM800K ratings). */
export type Verdict = 'positive' | 'negative' | 'neutral';

/** A judge's output for one chunk. */
export interface Judgment {
  chunkIndex: number;
  verdict: Verdict;
  /** Score in [0, 1]: probability-like confidence that the chunk is good. */
  score: number;
  /** The judge's written analysis, where it writes one. */
  rationale?: string;
  /** Number of sampled judgments whose verdict could not be parsed. */
  formatFailures?: number;
  /** Number of sampled judgments (k votes). */
  votes?: number;
}

/** Who spent the compute: the policy (solutions, rollouts) or the judge (verdicts, scores). */
export type Role = 'policy' | 'judge';

/** Calls and tokens spent by one role. */
export interface RoleCost {
  /** HTTP requests (or local generate calls) made. */
  calls: number;
  /** Samples received (a call with n = 8 gives 8). */
  samples: number;
  promptTokens: number;
  completionTokens: number;
}

/** Calls and tokens by role; every search, label and evaluation result carries one. */
export interface Cost {
  policy: RoleCost;
  judge: RoleCost;
}
