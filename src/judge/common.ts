import pLimit from 'p-limit';
import { CostLedger } from '../core/cost.js';
import type { GenerateResult, LanguageModel, Usage, World } from '../core/model.js';
import type { Cost, Judgment, Problem, Verdict } from '../core/types.js';
import { worldOfModel, worldOfReply } from '../models/simulated.js';
import type { JudgeOptions, JudgeResult, StepJudge } from './types.js';

/** Default threshold of score-based verdicts: a chunk is negative when its score is below it. */
export const DEFAULT_THRESHOLD = 0.5;

/**
 * The judge-role account of one `judge` call: every model call a judge makes is recorded in a
 * {@link CostLedger} under role `judge` (rollouts of a rollout judge included: they are spent on
 * judging). Cache hits cost nothing: their calls, samples and tokens are not counted.
 */
export class JudgeCost {
  private readonly ledger = new CostLedger();

  /** `world`: the world of the model the judge asks (its replies may show `sim` later). */
  constructor(world?: World) {
    this.ledger.saw(world);
  }

  /**
   * Record one call's usage and the number of samples it returned (`cached`: served from the
   * cache), and the world its reply shows (a sim-server reply is `sim` under any model name).
   */
  record(usage: Usage, samples: number, cached = false, reply?: Pick<GenerateResult, 'samples'>): void {
    this.ledger.record(
      'judge',
      {
        calls: usage.calls,
        samples: cached || usage.calls === 0 ? 0 : samples,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
      },
      reply ? worldOfReply(reply) : undefined,
    );
  }

  /** Add a cost computed elsewhere, all of it as the judge's, with the world(s) that did it. */
  addAsJudge(cost: Cost, world?: World | readonly World[]): void {
    for (const role of ['policy', 'judge'] as const) {
      const c = cost[role];
      this.ledger.record('judge', c);
    }
    this.ledger.saw(world);
  }

  get cost(): Cost {
    return this.ledger.snapshot();
  }

  /** The least real world of this call's judging work, from the ledger. */
  get world(): World | undefined {
    return this.ledger.world;
  }
}

/**
 * The world of a judge's work so far: its ledger's (`createJudge`'s judges: what the model is,
 * then its marked replies); a judge built by hand that only says `simulated` is `sim` or unknown.
 */
export function worldOfJudge(judge: Pick<StepJudge, 'world' | 'simulated'> | undefined): World | undefined {
  return judge?.world ?? (judge?.simulated ? 'sim' : undefined);
}

/** Positive when `score >= threshold`, negative otherwise. */
export function verdictOf(score: number, threshold: number): Verdict {
  return score >= threshold ? 'positive' : 'negative';
}

/** The chunk indices a call asks for: `options.only` (in order, in range, deduplicated) or all. */
export function chunksToJudge(count: number, options: JudgeOptions = {}): number[] {
  if (!options.only) return Array.from({ length: count }, (_, i) => i);
  return [...new Set(options.only)]
    .filter((i) => Number.isInteger(i) && i >= 0 && i < count)
    .sort((a, b) => a - b);
}

/** Index of the first negative judgment, −1 when none. */
export function firstNegative(judgments: readonly Judgment[]): number {
  return judgments.find((j) => j.verdict === 'negative')?.chunkIndex ?? -1;
}

/** A judgment on which the judge said nothing: every one of its votes was a format failure. */
export function isAbstention(j: Pick<Judgment, 'formatFailures' | 'votes'>): boolean {
  const failures = j.formatFailures ?? 0;
  return failures > 0 && failures >= (j.votes ?? 1);
}

/**
 * Assemble a result from judgments in chunk order: with `firstErrorOnly`, judgments after the
 * first negative are dropped (the contract says none follow it). A chunk the judge abstained on
 * before its first negative one makes the whole result an abstention: the first error could be
 * that chunk.
 */
export function resultFrom(
  judgments: Judgment[],
  cost: Cost,
  options: JudgeOptions,
  extra: Partial<JudgeResult> = {},
): JudgeResult {
  const sorted = [...judgments].sort((a, b) => a.chunkIndex - b.chunkIndex);
  const firstError = firstNegative(sorted);
  const kept =
    options.firstErrorOnly && firstError >= 0 ? sorted.filter((j) => j.chunkIndex <= firstError) : sorted;
  const formatFailures = kept.reduce((s, j) => s + (j.formatFailures ?? 0), 0);
  const replies = kept.reduce((s, j) => s + (j.votes ?? 1), 0);
  const abstainedAt = kept.find(isAbstention)?.chunkIndex;
  const abstained = abstainedAt !== undefined && (firstError < 0 || abstainedAt < firstError);
  return {
    judgments: kept,
    firstError,
    cost,
    formatFailures,
    replies,
    ...(abstainedAt !== undefined ? { abstainedAt } : {}),
    ...(abstained ? { abstained } : {}),
    ...extra,
  };
}

/** The judge replies a result was read from: its `replies`, else one per vote of each judgment. */
export function repliesOf(r: Pick<JudgeResult, 'replies' | 'judgments'>): number {
  return r.replies ?? r.judgments.reduce((s, j) => s + (j.votes ?? 1), 0);
}

/** Format failures as a share of judge replies (0 when there were none). */
export function formatFailureShare(formatFailures: number, replies: number): number {
  return replies > 0 ? formatFailures / replies : 0;
}

/** Throw the abort reason when the signal has fired. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}

/**
 * Judge `indices` one chunk at a time with `judgeOne`. With `firstErrorOnly` they are judged in
 * order and judging stops at the first negative. Otherwise in order one after another, or — when
 * `concurrency` is given — `concurrency` at a time (`Infinity`: all at once).
 */
export async function judgeEach(
  indices: readonly number[],
  options: JudgeOptions,
  judgeOne: (chunkIndex: number) => Promise<Judgment>,
  concurrency?: number,
): Promise<Judgment[]> {
  if (concurrency !== undefined && !options.firstErrorOnly) {
    if (concurrency === Number.POSITIVE_INFINITY) return Promise.all(indices.map(judgeOne));
    const limit = pLimit(concurrency);
    return Promise.all(indices.map((i) => limit(() => judgeOne(i))));
  }
  const judgments: Judgment[] = [];
  for (const i of indices) {
    const j = await judgeOne(i);
    judgments.push(j);
    if (options.firstErrorOnly && j.verdict === 'negative') break;
  }
  return judgments;
}

/** What a judge's per-call work returns: its judgments, and fields that override the computed ones. */
export type JudgedChunks = Judgment[] | { judgments: Judgment[]; extra: Partial<JudgeResult> };

/**
 * A {@link StepJudge} around one call's work: every judge gets a fresh {@link JudgeCost} per call,
 * turns its judgments into a result with {@link resultFrom} (first error, trimming, format
 * failures) and closes the model it judges with.
 */
export function defineJudge(
  model: LanguageModel,
  shape: { name: string; scalar: boolean; threshold?: number },
  judgeChunks: (
    problem: Problem,
    chunks: readonly string[],
    options: JudgeOptions,
    cost: JudgeCost,
  ) => Promise<JudgedChunks>,
): StepJudge {
  return {
    ...shape,
    async judge(
      problem: Problem,
      chunks: readonly string[],
      options: JudgeOptions = {},
    ): Promise<JudgeResult> {
      const cost = new JudgeCost(worldOfModel(model));
      const out = await judgeChunks(problem, chunks, options, cost);
      return Array.isArray(out)
        ? resultFrom(out, cost.cost, options)
        : resultFrom(out.judgments, cost.cost, options, out.extra);
    },
    close: model.close ? () => model.close!() : undefined,
  };
}
