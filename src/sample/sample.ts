import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { CostLedger } from '../core/cost.js';
import { UsageError } from '../core/errors.js';
import {
  codeWithoutTags,
  type Segmentation,
  type SegmentBy,
  segment,
  splitWritten,
  stripChunkTags,
} from '../core/segment.js';
import type { Problem } from '../core/types.js';
import type { SampledSolutionSchema, SampleOutputRowSchema } from '../data/record-kinds.js';
import { streamJsonl } from '../jobs/lines.js';
import type { ResumeCounts } from '../jobs/made-from.js';
import { runJsonlJob, runStreamJob, type Shard } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import type { Policy } from '../models/policy.js';
import { itemSeed } from '../models/seeds.js';
import { worldOfReply } from '../models/simulated.js';
import { checkSolution } from '../verify/check.js';
import { passAtK } from '../verify/code/passk.js';
import { reportedKs } from './passk.js';

/** One sampled solution of a problem (its schema: src/data/record-kinds.ts, SampledSolutionSchema). */
export type SampledSolution = z.infer<typeof SampledSolutionSchema>;

/** One output line: a problem and its K samples, as its strict schema declares (SampleOutputRowSchema). */
export type SampleRecord = z.infer<typeof SampleOutputRowSchema>;

export interface SampleJobOptions {
  problems: readonly Problem[];
  policy: Policy;
  /**
   * The job's cost ledger (`ledgerOf(policy model)`): its world marks every line (`simulated:
   * true` once any of the work was the simulated world's). Without one, only replies the sim
   * server marked say so.
   */
  ledger?: CostLedger;
  /** Samples per problem, sent as ONE request with n = K (shared prefill). */
  n: number;
  /** JSONL output; a rerun resumes it. */
  out: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  /** Run seed: problem `id` gets seed `itemSeed(seed, id)`, so reruns reproduce. */
  seed?: number;
  /** Problems in flight. */
  concurrency?: number;
  /** Only this part of the problems (by a hash of the problem id); parts join with `stepwise merge`. */
  shard?: Shard;
  /**
   * Whether an error means "the request waits in a batch file" (`--batch-out`): the problem is
   * left for a later run instead of failing the job.
   */
  isPending?: (error: unknown) => boolean;
  /** Step splitter (default `paragraph`) when the policy is not asked for tags. */
  segmentBy?: Exclude<SegmentBy, 'tags'>;
  /** Default: the policy's. Under `tags` the samples are split on the policy's own `<chunk>` tags. */
  segmentation?: Segmentation;
  /** Start over instead of resuming. */
  fresh?: boolean;
  /** Exit 2 instead of redoing rows whose problem changed since they were sampled (jobs/made-from). */
  strictResume?: boolean;
  /** Recorded on every row; a resumed output must have the same (see jobs/settings). */
  settings?: JobSettings;
  noCache?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; resumed: number }) => void;
  /** Warnings of the job (a resumed output it cannot verify, …); the model's own reach the registry's sink. */
  onWarning?: (message: string) => void;
}

/** Options of {@link runSampleJobSummary}: the problems may be read as the job goes. */
export interface SampleStreamOptions extends Omit<SampleJobOptions, 'problems'> {
  /** The problems, taken at most `concurrency` ahead of the work (a list, or read from a file as needed). */
  problems: Iterable<Problem> | AsyncIterable<Problem>;
  /** How many problems there are, for progress (a list's length by default). */
  total?: number;
  /**
   * The problems again, read once before any work (jobs/run-job `plan`): rows whose problem
   * changed are found, and refused under `strictResume`, before the first request.
   */
  plan?: Iterable<Problem> | AsyncIterable<Problem>;
}

/** Accuracy, pass@k and tokens of a set of sample records. */
export interface SampleSummary {
  /** Present and true when any record came from the simulated world. */
  simulated?: true;
  problems: number;
  samplesPerProblem: number;
  samples: number;
  /** Fraction of all samples that are correct (= mean pass@1). */
  accuracy: number;
  /** `pass@k` for k = 1, 2, 4, …, K (unbiased estimator). */
  passAtK: Record<string, number>;
  /** Samples with no extractable final answer. */
  noAnswer: number;
  /** Samples cut by max tokens. */
  truncated: number;
  tokens: { completion: number; prompt: number; meanPerSample: number };
  /** Problems served entirely from the cache. */
  cachedProblems: number;
  /** Mean chunks per sample, and (under tags) samples whose tags were malformed and fell back to paragraphs. */
  chunksPerSolution: number;
  brokenTags?: number;
}

/** Sample K solutions of one problem with one request and check them. */
export async function sampleProblem(
  problem: Problem,
  options: Omit<SampleJobOptions, 'problems' | 'out' | 'concurrency' | 'fresh' | 'settings' | 'onProgress'>,
): Promise<SampleRecord> {
  const result = await options.policy.continue(problem.question, '', {
    n: options.n,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
    topP: options.topP,
    seed: itemSeed(options.seed, problem.id),
    signal: options.signal,
    noCache: options.noCache,
  });
  const ledger = options.ledger ?? new CostLedger();
  ledger.record(
    'policy',
    { ...result.usage, samples: result.cached ? 0 : result.samples.length },
    worldOfReply(result),
  );
  const by = options.segmentBy ?? 'paragraph';
  const segmentation = options.segmentation ?? options.policy.segmentation ?? 'paragraph';
  const samples: SampledSolution[] = [];
  // Code under tags: chunks keep their indentation, and the tag lines are not part of the program.
  const code = problem.domain === 'code';
  for (const s of result.samples) {
    const check = await checkSolution(
      problem,
      code && segmentation === 'tags' ? codeWithoutTags(s.text) : s.text,
    );
    const checked = {
      answer: check.answer,
      correct: check.correct,
      tokens: s.completionTokens,
      finishReason: s.finishReason,
    };
    if (segmentation === 'tags') {
      // Code: the chunks are what comes before the closing fence.
      const fence = code ? s.text.indexOf('```') : -1;
      const written = fence >= 0 ? s.text.slice(0, fence) : s.text;
      const split = splitWritten(written, 'tags', { keepIndent: code });
      samples.push(
        split.method === 'tags'
          ? { text: s.text, chunks: split.chunks, segmentation: 'tags', ...checked }
          : {
              text: code ? codeWithoutTags(written) : stripChunkTags(s.text),
              chunks: split.chunks,
              segmentation: 'paragraph',
              tagProblem: split.problem,
              written: s.text,
              ...checked,
            },
      );
      continue;
    }
    samples.push({ text: s.text, chunks: segment(s.text, by), ...checked });
  }
  return {
    id: problem.id,
    question: problem.question,
    gold: problem.answer,
    samples,
    promptTokens: result.usage.promptTokens,
    cached: result.cached === true,
    ...(ledger.simulated ? { simulated: true as const } : {}),
    segmentation,
  };
}

/** A resumed output must have been sampled under the same segmentation: a rerun never mixes them. */
function assertSameSegmentation(out: string, segmentation: Segmentation): void {
  if (!existsSync(out)) return;
  for (const { line, value } of streamJsonl(out, { skipInvalid: true })) {
    const was = (value as { segmentation?: unknown } | null)?.segmentation ?? 'paragraph';
    if (was !== segmentation)
      throw new UsageError(
        `${out}, line ${line}: sampled with --segmentation ${String(was)}, not ${segmentation}: pass --fresh to start it over, or choose another --out`,
      );
  }
}

/**
 * Sample K solutions per problem into a resumable JSONL file: each problem is appended as
 * soon as its samples are checked, a rerun skips problems already in the file, and the finished
 * file is rewritten in input order. Returns the records of all problems, in input order.
 */
export async function runSampleJob(options: SampleJobOptions): Promise<SampleRecord[]> {
  const segmentation = options.segmentation ?? options.policy.segmentation ?? 'paragraph';
  // With settings (the CLI), the settings check covers the segmentation; without, check it here.
  if (!options.fresh && !options.settings) assertSameSegmentation(options.out, segmentation);
  return runJsonlJob<Problem, SampleRecord>({
    items: options.problems,
    keyOf: (p) => p.id,
    keyOfOutput: (r) => r.id,
    out: options.out,
    concurrency: options.concurrency ?? 16,
    fresh: options.fresh,
    settings: options.settings,
    signal: options.signal,
    onProgress: options.onProgress,
    process: (problem) => sampleProblem(problem, options),
  });
}

/**
 * Sample K solutions per problem like {@link runSampleJob}, without holding the records: each
 * finished record is written and only its counts are kept, so the summary of a job of any size
 * comes out in memory bounded by the concurrency (and a few numbers per problem).
 */
export async function runSampleJobSummary(
  options: SampleStreamOptions,
): Promise<SampleSummary & ResumeCounts & { pending?: number }> {
  const acc = sampleAccumulator();
  const { problems } = options;
  const result = await runStreamJob<Problem, SampleRecord>({
    items: problems,
    keyOf: (p) => p.id,
    keyOfOutput: (r) => r.id,
    out: options.out,
    total: options.shard
      ? undefined
      : (options.total ?? (Array.isArray(problems) ? problems.length : undefined)),
    concurrency: options.concurrency ?? 16,
    fresh: options.fresh,
    strictResume: options.strictResume,
    onWarning: options.onWarning,
    plan: options.plan,
    unit: 'problems',
    settings: options.settings,
    shard: options.shard,
    signal: options.signal,
    onProgress: options.onProgress,
    onRecord: (r) => {
      // A resumed line's world counts too: it is work of this job.
      if (r.simulated) options.ledger?.saw('sim');
      acc.add(r);
    },
    process: async (problem) => {
      try {
        return await sampleProblem(problem, options);
      } catch (e) {
        if (options.isPending?.(e)) return undefined;
        throw e;
      }
    },
  });
  const summary = {
    ...acc.result(),
    resumed: result.resumed,
    redone: result.redone,
    unverified: result.unverified,
  };
  return result.pending > 0 ? { ...summary, pending: result.pending } : summary;
}

/** Accuracy, pass@k (k = 1, 2, 4, …, K) and token totals over sample records. */
export function summarizeSamples(records: readonly SampleRecord[]): SampleSummary {
  const acc = sampleAccumulator();
  for (const r of records) acc.add(r);
  return acc.result();
}

/**
 * {@link summarizeSamples} one record at a time: keeps counts, not samples — and pass@k's
 * (samples, correct) pairs as a histogram, so a job of any size keeps at most K² numbers.
 */
export function sampleAccumulator(): { add(r: SampleRecord): void; result(): SampleSummary } {
  let k = 0;
  let problems = 0;
  const counts = new Map<string, { n: number; c: number; problems: number }>();
  const t = {
    samples: 0,
    correct: 0,
    noAnswer: 0,
    truncated: 0,
    completion: 0,
    prompt: 0,
    cached: 0,
    chunks: 0,
    tagged: false,
    brokenTags: 0,
  };
  let simulated = false;
  return {
    add(r) {
      if (r.simulated) simulated = true;
      k = Math.max(k, r.samples.length);
      problems++;
      const n = r.samples.length;
      const c = r.samples.filter((s) => s.correct).length;
      const bin = counts.get(`${n}/${c}`);
      if (bin) bin.problems++;
      else counts.set(`${n}/${c}`, { n, c, problems: 1 });
      for (const s of r.samples) {
        t.samples++;
        if (s.correct) t.correct++;
        if (s.answer === null) t.noAnswer++;
        if (s.finishReason === 'length') t.truncated++;
        t.completion += s.tokens;
        t.chunks += s.chunks.length;
        if (s.segmentation === 'paragraph') t.brokenTags++;
      }
      t.prompt += r.promptTokens;
      if (r.cached) t.cached++;
      if (r.segmentation === 'tags') t.tagged = true;
    },
    result() {
      const summary = summaryFrom(k, problems, [...counts.values()], t);
      return simulated ? { ...summary, simulated: true } : summary;
    },
  };
}

/** Mean pass@k over a histogram of (samples, correct) pairs; NaN when it is empty. */
function meanPassAtKOf(bins: ReadonlyArray<{ n: number; c: number; problems: number }>, k: number): number {
  let sum = 0;
  let problems = 0;
  for (const b of bins) {
    sum += b.problems * passAtK(b.n, b.c, k);
    problems += b.problems;
  }
  return problems === 0 ? Number.NaN : sum / problems;
}

function summaryFrom(
  k: number,
  problems: number,
  counts: Array<{ n: number; c: number; problems: number }>,
  t: {
    samples: number;
    correct: number;
    noAnswer: number;
    truncated: number;
    completion: number;
    prompt: number;
    cached: number;
    chunks: number;
    tagged: boolean;
    brokenTags: number;
  },
): SampleSummary {
  const passAtK: Record<string, number> = {};
  // pass@k (unbiased estimator, shared with code evaluation) over problems with at least k samples.
  if (k > 0)
    for (const kk of reportedKs(k))
      passAtK[`pass@${kk}`] = meanPassAtKOf(
        counts.filter((c) => c.n >= kk),
        kk,
      );
  return {
    problems,
    samplesPerProblem: k,
    samples: t.samples,
    accuracy: t.samples === 0 ? Number.NaN : t.correct / t.samples,
    passAtK,
    noAnswer: t.noAnswer,
    truncated: t.truncated,
    tokens: {
      completion: t.completion,
      prompt: t.prompt,
      meanPerSample: t.samples === 0 ? 0 : t.completion / t.samples,
    },
    cachedProblems: t.cached,
    chunksPerSolution: t.samples === 0 ? 0 : t.chunks / t.samples,
    ...(t.tagged ? { brokenTags: t.brokenTags } : {}),
  };
}
