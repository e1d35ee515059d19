import { resolve } from 'node:path';
import type { Command } from 'commander';
import { codeDomainFor } from '../code/domain.js';
import { createCodePolicy } from '../code/policy.js';
import { StepwiseError, UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { parseFieldMapping } from '../data/jsonl.js';
import { assertDatasetName, problemSource } from '../data/load.js';
import type { Policy, PromptForm } from '../models/policy.js';
import { renderCodeProblem } from '../prompts/code.js';
import { mathDomain, type SearchDomain } from '../search/domain.js';
import { simDatasetProblemSequence } from '../sim/dataset.js';
import { parseSimSpec } from '../sim/options.js';
import { intOption } from './options.js';
import { providers } from './providers.js';
import { addUnsafeFilesystemOption } from './sandbox.js';

/**
 * The data-set flags every command that runs over problems shares (`sample`, `search`,
 * `bench search`): a named data set read by `loadProblems`, or `sim`, generated on the fly.
 */
export interface DatasetFlags {
  dataset: string;
  path?: string;
  split?: string;
  limit?: number;
  count?: number;
  simSeed?: number;
  /** jsonl: where id, question and answer are (`question=problem,answer=gold`). */
  fields?: string;
}

/** `--fields`, wherever `--dataset` is. */
export const FIELDS_HELP =
  'with --dataset jsonl: where id, question and answer are, e.g. question=problem,answer=gold,id=uid';

/** Problems of `--dataset`: any data set of `loadProblems`, or `sim` (generated, `--count`, `--sim-seed`). */
export async function loadDatasetProblems(f: DatasetFlags & { policy?: string }): Promise<Problem[]> {
  // The same reader a streaming job reads them with, collected.
  const problems: Problem[] = [];
  for await (const p of datasetReader(f)()) problems.push(p);
  if (problems.length === 0) throw new StepwiseError(`no problems loaded from ${f.dataset}`, { exitCode: 2 });
  return problems;
}

/** How many problems a data set holds, and how many of them are code problems. */
export interface ProblemCounts {
  count: number;
  code: number;
}

/**
 * The problems of `--dataset` for a job that streams them: {@link scanDatasetProblems} has read
 * them once, and `read()` reads them again as the job goes. Nothing holds the problems.
 */
export interface DatasetProblems extends ProblemCounts {
  /** The problems in order, read anew on each call (JSONL a line at a time). */
  read(): AsyncIterable<Problem>;
  /** Some problem is from the simulated world (source `sim`). */
  simulated: boolean;
}

/**
 * Read `--dataset` once, a record at a time and holding none, before a job starts: a bad record
 * fails here (file, line, field) as it did when the set was loaded whole, `check` sees every
 * problem before any work is done, and the job learns how many problems there are and whether
 * they are code. The job then reads them again with `read()`, taking only what its concurrency
 * needs — so memory does not grow with the data set.
 */
export async function scanDatasetProblems(
  f: DatasetFlags & { policy?: string },
  check?: (problem: Problem) => void,
): Promise<DatasetProblems> {
  const read = datasetReader(f);
  let count = 0;
  let code = 0;
  let simulated = false;
  for await (const p of read()) {
    check?.(p);
    count++;
    if (p.domain === 'code') code++;
    if (p.source === 'sim') simulated = true;
  }
  if (count === 0) throw new StepwiseError(`no problems loaded from ${f.dataset}`, { exitCode: 2 });
  return { read, count, code, simulated };
}

/** What reads `--dataset`'s problems (the same ones, in the same order, as {@link loadDatasetProblems}). */
function datasetReader(f: DatasetFlags & { policy?: string }): () => AsyncIterable<Problem> {
  if (f.dataset === 'sim') {
    // Generated in order from the seed: the first `limit` are those of a longer set.
    const count = Math.min(f.count ?? f.limit ?? 100, f.limit ?? Number.POSITIVE_INFINITY);
    // The success rates the sim data set reports are those of the policy's world options.
    const world =
      f.policy && providers.parse(f.policy).provider === 'sim' ? parseSimSpec(f.policy).options : {};
    return async function* () {
      yield* simDatasetProblemSequence(count, { ...world, seed: f.simSeed ?? 0 });
    };
  }
  const source = problemSource(assertDatasetName(f.dataset), {
    path: f.path,
    limit: f.limit,
    split: f.split,
    fields: f.fields === undefined ? undefined : parseFieldMapping(f.fields),
  });
  return () => source.read();
}

/**
 * The data-set part of a job's recorded settings: which data set (and part, and file, and sim
 * seed). `--limit` and `--count` are not: they say how many problems, and a rerun with more
 * extends the same output.
 */
export function datasetSettings(f: DatasetFlags): Record<string, unknown> {
  return {
    dataset: f.dataset,
    split: f.split,
    path: f.path === undefined ? undefined : resolve(f.path),
    simSeed: f.dataset === 'sim' ? (f.simSeed ?? 0) : undefined,
    fields: f.fields,
  };
}

/** Options of the data-set flags. */
export function addDatasetOptions(cmd: Command): Command {
  // Code data sets run model-written programs in the sandbox.
  return addUnsafeFilesystemOption(cmd)
    .requiredOption(
      '--dataset <name>',
      'data set: sim (simulated, generated), gsm8k, math, math500, jsonl, …',
    )
    .option('--path <file>', 'data file or folder (default: $STEPWISE_DATA or the data pull cache)')
    .option('--split <name>', 'part of the data set (e.g. gsm8k test|train)')
    .option('--limit <n>', 'only the first n problems', intOption('--limit', 1))
    .option('--count <n>', 'sim: problems to generate (default 100)', intOption('--count', 1))
    .option('--sim-seed <s>', 'sim: seed of the generated problems (default 0)', intOption('--sim-seed', 0))
    .option('--fields <mapping>', FIELDS_HELP);
}

/**
 * The data-set flags of a job whose input file names problems by id (`label`, `select`): where to
 * look up their questions and gold answers. Any data set, `sim` included.
 */
export function addDatasetLookupOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--dataset <name>', `${what}: sim, gsm8k, math, math500, jsonl, …`)
    .option('--path <file>', 'with --dataset: file or folder to read')
    .option('--split <split>', 'with --dataset: part of the set (e.g. GSM8K test)')
    .option('--count <n>', 'with --dataset sim: problems generated (default 100)', intOption('--count', 1))
    .option(
      '--sim-seed <s>',
      'with --dataset sim: seed of the generated problems (default 0)',
      intOption('--sim-seed', 0),
    )
    .option('--fields <mapping>', FIELDS_HELP);
}

function countsOf(problems: readonly Problem[] | ProblemCounts): ProblemCounts {
  if (!Array.isArray(problems)) return problems as ProblemCounts;
  return { count: problems.length, code: problems.filter((p) => p.domain === 'code').length };
}

/** Whether the problems are code problems (all of them) or math (none); a mix is a usage error. */
function codeProblems(problems: readonly Problem[] | ProblemCounts, policy: Policy): boolean {
  const { count, code } = countsOf(problems);
  if (code === 0) return false;
  if (code < count) throw new UsageError('the data set mixes code and math problems: run them separately');
  if (policy.chatTemplate)
    throw new UsageError(
      '--chat-template renders the math solution prompt; code policies keep their own prompt',
    );
  return true;
}

/**
 * Code problems are posed with the code prompt (fenced Python, the tests shown) instead of the
 * math one: the policy becomes the code policy over the same model, and each question is the
 * rendered code problem (the original prompt stays in `meta.prompt`, where the checker reads it).
 */
export function policyForProblems(
  problems: readonly Problem[],
  policy: Policy,
  options: { form?: PromptForm } = {},
): { problems: Problem[]; policy: Policy } {
  const { policy: posed, pose } = policyForDataset(problems, policy, options);
  return { policy: posed, problems: problems.map(pose) };
}

/**
 * {@link policyForProblems} for problems read one at a time: the policy, and how to pose each
 * problem as it is read (code problems get the rendered code prompt).
 */
export function policyForDataset(
  problems: readonly Problem[] | ProblemCounts,
  policy: Policy,
  options: { form?: PromptForm } = {},
): { policy: Policy; pose: (problem: Problem) => Problem } {
  if (!codeProblems(problems, policy)) return { policy, pose: (p) => p };
  return {
    policy: createCodePolicy(policy.model, { ...options, segmentation: policy.segmentation }),
    pose: (p) => ({
      ...p,
      question: renderCodeProblem(p),
      meta: { ...p.meta, prompt: p.meta?.prompt ?? p.question },
    }),
  };
}

/**
 * The search domain of the problems: math, or code (the code policy over the same model, steps
 * as logical blocks, the tests in the sandbox as checker; src/code/domain.ts).
 */
export function searchDomainFor(
  problems: readonly Problem[] | ProblemCounts,
  policy: Policy,
  options: { form?: PromptForm } = {},
): { domain: SearchDomain; policy: Policy } {
  if (!codeProblems(problems, policy)) return { domain: mathDomain, policy };
  const segmentation = policy.segmentation ?? 'paragraph';
  return {
    domain: codeDomainFor(segmentation),
    policy: createCodePolicy(policy.model, { ...options, segmentation }),
  };
}
