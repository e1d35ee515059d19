import { createHash } from 'node:crypto';
import { emptyCost } from '../core/cost.js';
import { UsageError } from '../core/errors.js';
import { hashString } from '../core/rng.js';
import type { Cost, Problem, Rollout } from '../core/types.js';
import { type Policy, prefixFromChunks } from '../models/policy.js';
import { deriveSeed } from '../models/seeds.js';
import { wroteSimulated } from '../models/simulated.js';
import { DEFAULT_EARLY_STOP_BATCH, DEFAULT_LABEL_CONFIG } from './config.js';

/**
 * Monte Carlo step values (METHODS §2): Q̂(i) = share of M continuations from the prefix that
 * ends after chunk i whose full solution (prefix + continuation) the checker accepts; Q̂(H), the
 * whole solution, is r*(x, solution) itself. One request with n = M per prefix 0…H−1 (shared
 * prefill); the backend falls back to single requests where a server rejects n > 1.
 */

/** What an answer checker returns: a verdict, or an object carrying one (e.g. `{answer, correct}`). */
export type CheckResult = boolean | { correct: boolean; answer?: string | null };

/** Checks a full solution text (prefix + rollout) against the problem's gold answer. */
export type AnswerChecker = (problem: Problem, text: string) => CheckResult | Promise<CheckResult>;

/** Runs an async task under a shared concurrency limit (a `p-limit` instance fits). */
export type TaskLimiter = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * Early stopping for labels that only need "some rollout is correct" (Abs-Q, Math-Shepherd
 * hard, SORM): draw rollouts in batches and stop at the first correct one.
 */
export interface EarlyStopOptions {
  /** Rollouts per request while searching for a correct one (default 4). */
  batchSize?: number;
}

export interface RolloutOptions {
  /** Rollouts per prefix, M (StepWiser: 16). */
  rollouts: number;
  /** Sampling temperature (default 1.0, as in StepWiser). */
  temperature?: number;
  topP?: number;
  /** Token budget of one rollout (default 2048, as every stepwise policy call). */
  maxTokens?: number;
  stop?: string[];
  /**
   * Run seed (default 0). Each prefix's request gets a seed derived from (seed, prefix length),
   * so the rollouts of a prefix do not depend on the search mode, the order of work or the
   * solution it belongs to: identical prefixes share one request (and one cache entry).
   */
  seed?: number;
  /** Stop sampling a prefix at its first correct rollout (off by default: Q̂ is then not an estimate of the value). */
  earlyStop?: boolean | EarlyStopOptions;
  /** Shared limit on requests in flight (default: no limit beyond the backend's own). */
  limit?: TaskLimiter;
  /** Reuse estimates of identical prefixes within a job (see {@link createPrefixMemo}). */
  memo?: PrefixMemo;
  /**
   * The prefix text made of the first k chunks. Default: the chunks rebuilt in the policy's
   * segmentation (blank lines, or `<chunk>` tags). Label passes the policy's own written text
   * where it has it, so rollouts continue exactly what the policy wrote.
   */
  prefixOf?: (prefixLength: number) => string;
  /** Keep every rollout's text and verdict in the result (default false). */
  keepRollouts?: boolean;
  signal?: AbortSignal;
  noCache?: boolean;
}

/** The estimate for one prefix. */
export interface PrefixEstimate {
  /** Chunks in the prefix: 0 = the empty prefix (bare problem), i = after chunk i. */
  prefixLength: number;
  /** Q̂: correct / samples. */
  q: number;
  /** Rollouts drawn (M, or fewer with early stopping). */
  samples: number;
  correct: number;
  /** Completion tokens of the rollouts drawn (cached or not: what they cost to generate). */
  rolloutTokens: number;
  /** What this call actually spent (zero for cache hits and for memo reuse). */
  cost: Cost;
  /** Generate calls made (one per batch). */
  requests: number;
  rollouts?: Rollout[];
  /** True for the whole solution: its value is the exact check, not an estimate (no rollouts). */
  checked?: boolean;
  /** Present and true when a rollout came from the simulated world (a marked sim-server reply). */
  simulated?: true;
}

/** Estimates shared between solutions of one job, keyed by the exact request. */
export type PrefixMemo = Map<string, Promise<PrefixEstimate>>;

/**
 * A memo holding the `capacity` most recently added estimates: shared prefixes (the empty
 * prefix of a problem's samples) sit close together in an input, and a job of any size must
 * not keep every estimate it ever made.
 */
export function createPrefixMemo(capacity = 4096): PrefixMemo {
  return new BoundedMemo(capacity);
}

class BoundedMemo<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
  }
  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    // Map iterates in insertion order: the first key is the oldest.
    while (this.size > this.capacity) super.delete(this.keys().next().value as K);
    return this;
  }
}

/** SHA-256 of the JSON of `parts` (base64, 44 characters): a memo key of fixed size. */
function memoDigest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64');
}

/** The seed of prefix `prefixLength`'s request under run seed `seed`. */
export function prefixSeed(seed: number, prefixLength: number): number {
  return hashString(`label:${seed}:${prefixLength}`) & 0x7fffffff;
}

function batchSizeOf(o: RolloutOptions): number | null {
  if (!o.earlyStop) return null;
  const b =
    o.earlyStop === true ? DEFAULT_EARLY_STOP_BATCH : (o.earlyStop.batchSize ?? DEFAULT_EARLY_STOP_BATCH);
  if (!Number.isInteger(b) || b < 1)
    throw new UsageError(`early-stop batch size must be a positive integer, got ${b}`);
  return b;
}

function checkOptions(o: RolloutOptions): void {
  if (!Number.isInteger(o.rollouts) || o.rollouts < 1)
    throw new UsageError(`rollouts per prefix must be a positive integer, got ${o.rollouts}`);
}

async function verdict(
  checker: AnswerChecker,
  problem: Problem,
  text: string,
): Promise<{ correct: boolean; answer: string | null }> {
  const r = await checker(problem, text);
  return typeof r === 'boolean'
    ? { correct: r, answer: null }
    : { correct: r.correct, answer: r.answer ?? null };
}

/**
 * Estimate Q̂ for the prefix made of the first `prefixLength` chunks. Without early stopping
 * this is one generate call with n = M. With early stopping, batches of b rollouts are drawn
 * until one is correct or M are drawn; batch k covers samples [k·b, k·b + b) and carries the seed
 * the backend itself would give that block of an n = M request, so a batch of b = 1 against a
 * server without n is the very request the exact run would send.
 */
export async function estimatePrefixValue(
  policy: Policy,
  checker: AnswerChecker,
  problem: Problem,
  chunks: readonly string[],
  prefixLength: number,
  options: RolloutOptions,
): Promise<PrefixEstimate> {
  checkOptions(options);
  if (!Number.isInteger(prefixLength) || prefixLength < 0 || prefixLength > chunks.length)
    throw new RangeError(`prefix length ${prefixLength} outside 0..${chunks.length}`);
  const prefix = options.prefixOf
    ? options.prefixOf(prefixLength)
    : prefixFromChunks(chunks.slice(0, prefixLength), policy.segmentation);
  const batch = batchSizeOf(options);
  const seed = prefixSeed(options.seed ?? DEFAULT_LABEL_CONFIG.seed, prefixLength);
  const request = {
    temperature: options.temperature ?? DEFAULT_LABEL_CONFIG.temperature,
    topP: options.topP,
    maxTokens: options.maxTokens ?? DEFAULT_LABEL_CONFIG.maxTokens,
    stop: options.stop,
  };
  // The memo holds a digest of the request, not the request: its text (question and prefix,
  // up to a whole solution) would keep thousands of solutions' texts alive.
  const memoKey = options.memo
    ? memoDigest([
        problem.domain,
        // The prompt differs by segmentation even where the prefix does not (the bare problem).
        policy.segmentation ?? 'paragraph',
        problem.question,
        problem.answer,
        prefix,
        options.rollouts,
        batch,
        seed,
        request,
        options.keepRollouts ?? false,
      ])
    : '';
  const existing = options.memo?.get(memoKey);
  if (existing) {
    const shared = await existing;
    // Reused: the labels rest on these rollouts, but nothing was spent for them here.
    return { ...shared, cost: emptyCost(), requests: 0 };
  }
  const run = async (): Promise<PrefixEstimate> => {
    const M = options.rollouts;
    const out: PrefixEstimate = {
      prefixLength,
      q: 0,
      samples: 0,
      correct: 0,
      rolloutTokens: 0,
      cost: emptyCost(),
      requests: 0,
    };
    if (options.keepRollouts) out.rollouts = [];
    const limit: TaskLimiter = options.limit ?? ((task) => task());
    while (out.samples < M) {
      const n = batch === null ? M : Math.min(batch, M - out.samples);
      const result = await limit(() =>
        policy.continue(problem.question, prefix, {
          ...request,
          n,
          seed: deriveSeed(seed, out.samples),
          signal: options.signal,
          noCache: options.noCache,
        }),
      );
      out.requests++;
      out.cost.policy.calls += result.usage.calls;
      out.cost.policy.samples += result.cached ? 0 : result.samples.length;
      out.cost.policy.promptTokens += result.usage.promptTokens;
      out.cost.policy.completionTokens += result.usage.completionTokens;
      if (result.samples.length < n)
        throw new Error(`policy returned ${result.samples.length} of ${n} requested rollouts`);
      if (wroteSimulated(result)) out.simulated = true;
      for (const sample of result.samples.slice(0, n)) {
        const v = await verdict(checker, problem, prefix + sample.text);
        out.samples++;
        if (v.correct) out.correct++;
        out.rolloutTokens += sample.completionTokens;
        out.rollouts?.push({
          afterChunk: prefixLength - 1,
          text: sample.text,
          answer: v.answer,
          correct: v.correct,
          tokens: sample.completionTokens,
        });
      }
      if (batch !== null && out.correct > 0) break;
    }
    out.q = out.correct / out.samples;
    return out;
  };
  const promise = run();
  if (options.memo) {
    options.memo.set(memoKey, promise);
    // A failed estimate must not poison later attempts (e.g. a resumed job in the same process).
    promise.catch(() => options.memo?.delete(memoKey));
  }
  return promise;
}

/** Q̂ for the empty prefix and after every chunk. */
export interface StepValues {
  /** `q[0]` = Q̂ of the empty prefix, `q[i]` = Q̂ after chunk i (length H + 1). */
  q: number[];
  /** The estimates behind `q`, in the same order. */
  prefixes: PrefixEstimate[];
  /** Rollouts the values rest on. */
  rollouts: number;
  /** Completion tokens of those rollouts. */
  rolloutTokens: number;
  /** What was actually spent (cache hits and memo reuse cost nothing). */
  cost: Cost;
}

function sumCosts(parts: readonly PrefixEstimate[]): Cost {
  const c = emptyCost();
  for (const p of parts) {
    c.policy.calls += p.cost.policy.calls;
    c.policy.samples += p.cost.policy.samples;
    c.policy.promptTokens += p.cost.policy.promptTokens;
    c.policy.completionTokens += p.cost.policy.completionTokens;
  }
  return c;
}

/**
 * The whole solution's value Q̂(H) = r*(x, a_1..a_H): the exact check of the finished text. No
 * rollout is drawn from it (a continuation of a finished solution adds nothing, and its sampled
 * verdicts could contradict the solution's own answer). `known` is the check already made (e.g.
 * by `stepwise sample`); otherwise the checker runs on the joined chunks.
 */
export async function checkedFullSolution(
  checker: AnswerChecker,
  problem: Problem,
  chunks: readonly string[],
  known?: boolean,
): Promise<PrefixEstimate> {
  const correct = known ?? (await verdict(checker, problem, prefixFromChunks(chunks))).correct;
  return {
    prefixLength: chunks.length,
    q: correct ? 1 : 0,
    samples: 0,
    correct: correct ? 1 : 0,
    rolloutTokens: 0,
    cost: emptyCost(),
    requests: 0,
    checked: true,
  };
}

/**
 * Q̂(0..H) for a solution split into `chunks`: one estimate per prefix 0…H−1 (the empty prefix
 * and after each chunk but the last), all requested concurrently (bounded by `options.limit`),
 * and Q̂(H) = the exact check of the whole solution ({@link checkedFullSolution}; `finalCorrect`
 * when already known). A solution with no chunks has only Q̂(0), estimated by rollouts.
 */
export async function estimateStepValues(
  policy: Policy,
  checker: AnswerChecker,
  problem: Problem,
  chunks: readonly string[],
  options: RolloutOptions,
  finalCorrect?: boolean,
): Promise<StepValues> {
  checkOptions(options);
  const H = chunks.length;
  const prefixes = await Promise.all(
    Array.from({ length: H + 1 }, (_, i) =>
      i === H && H > 0
        ? checkedFullSolution(checker, problem, chunks, finalCorrect)
        : estimatePrefixValue(policy, checker, problem, chunks, i, options),
    ),
  );
  return {
    q: prefixes.map((p) => p.q),
    prefixes,
    rollouts: prefixes.reduce((a, p) => a + p.samples, 0),
    rolloutTokens: prefixes.reduce((a, p) => a + p.rolloutTokens, 0),
    cost: sumCosts(prefixes),
  };
}

/**
 * First index in [0, n) whose probe is false, assuming probes are true up to some index and
 * false from there on; −1 when all are true. Probes at most ⌈log2(n + 1)⌉ indices. At the end,
 * index `first − 1` has been probed true and index `first` probed false (where they exist).
 */
export async function bisectFirstFalse(
  n: number,
  probe: (index: number) => Promise<boolean>,
): Promise<number> {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await probe(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo === n ? -1 : lo;
}

/** The result of a binary first-error search. */
export interface FirstErrorSearch {
  /** 0-based index of the first chunk after which no rollout was correct, −1 when none. */
  firstError: number;
  /** The prefixes estimated, in the order probed. */
  probes: PrefixEstimate[];
  rollouts: number;
  rolloutTokens: number;
  cost: Cost;
}

/**
 * OmegaPRM's binary search for the first error (as in openr): estimate the prefix that ends at
 * the midpoint chunk; if no rollout is correct (Q̂ = 0) the first error is at or before it,
 * otherwise after it. O(log H) prefix estimates instead of H + 1. It finds the Abs-Q first error
 * exactly when Q̂ > 0 holds up to some chunk and fails from there on; when estimates are not
 * monotone it finds one boundary, not necessarily the first. Q̂(0) is not needed.
 */
export async function binarySearchFirstError(
  policy: Policy,
  checker: AnswerChecker,
  problem: Problem,
  chunks: readonly string[],
  options: RolloutOptions,
  finalCorrect?: boolean,
): Promise<FirstErrorSearch> {
  checkOptions(options);
  const probes: PrefixEstimate[] = [];
  const firstError = await bisectFirstFalse(chunks.length, async (chunkIndex) => {
    // The whole solution is checked, not rolled out from (as in estimateStepValues).
    const est =
      chunkIndex + 1 === chunks.length
        ? await checkedFullSolution(checker, problem, chunks, finalCorrect)
        : await estimatePrefixValue(policy, checker, problem, chunks, chunkIndex + 1, options);
    probes.push(est);
    return est.correct > 0;
  });
  return {
    firstError,
    probes,
    rollouts: probes.reduce((a, p) => a + p.samples, 0),
    rolloutTokens: probes.reduce((a, p) => a + p.rolloutTokens, 0),
    cost: sumCosts(probes),
  };
}
