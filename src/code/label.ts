import type { z } from 'zod';
import { createRng, shuffled } from '../core/rng.js';
import type { Chunk, Problem } from '../core/types.js';
import type { CodeLabelRowSchema } from '../data/record-kinds.js';
import { renderCodeProblem } from '../prompts/code.js';
import type { Sandbox, SandboxLimits, SandboxStatus } from '../verify/code/sandbox.js';
import { DEFAULT_SANDBOX_LIMITS, defaultSandbox } from '../verify/code/sandbox.js';
import { codeTaskOf, runCodeTask } from '../verify/code/tasks.js';
import { type CodeSegmentBy, chunkLines, segmentCode } from './blocks.js';
import type { Mutant } from './mutate.js';

/** The label signal name mutation labels carry in label files (`chunks[i].labels.mutation`). */
export const MUTATION_SIGNAL = 'mutation';

/** One line of `stepwise label-code` output, as its strict schema declares (src/data/record-kinds.ts). */
export type CodeLabelRow = z.infer<typeof CodeLabelRowSchema>;

export interface MutationLabelOptions {
  sandbox?: Sandbox;
  limits?: Partial<SandboxLimits>;
  /** Failing mutants to keep per problem (default 3). */
  mutantsPerProblem?: number;
  /** Mutants to try per problem before giving up (default 24). */
  maxAttempts?: number;
  /** Seed for the order in which mutants are tried (default 0). */
  seed?: number;
  /** Also emit the reference solution as an all-positive row (default true). */
  includeReference?: boolean;
  segment?: CodeSegmentBy;
}

/** What mutation labeling did for one problem. */
export interface MutationLabelResult {
  problemId: string;
  rows: CodeLabelRow[];
  referencePassed: boolean;
  mutantsAvailable: number;
  mutantsTried: number;
  /** Mutants that failed the tests (whether or not a row could be made from them). */
  mutantsFailing: number;
  /** Mutants that still passed every test (equivalent mutants or weak tests). */
  mutantsSurviving: number;
  /** Why no mutant rows were possible (no reference, reference fails, no mutants); a passing reference still gives its row. */
  skipped?: string;
}

/**
 * The steps of a program and the index of the first step a change at `line` affects. For a
 * replaced node, the step containing the line; for a removed statement, the first step at or
 * after the place it was removed from (the prefix before that step is still the reference's).
 * −1 when the change lies outside the steps (in the given prompt code) or after the last step.
 */
export function firstMutatedStep(
  code: string,
  steps: readonly Chunk[],
  mutant: Pick<Mutant, 'line' | 'dropped'>,
): number {
  for (let i = 0; i < steps.length; i++) {
    const { first, last } = chunkLines(code, steps[i]);
    if (mutant.dropped ? last >= mutant.line : first <= mutant.line && mutant.line <= last) return i;
    if (!mutant.dropped && first > mutant.line) return -1;
  }
  return -1;
}

/** The steps of `code` after the given prompt code (HumanEval), or all of them. */
export function codeSteps(code: string, given: string, segment: CodeSegmentBy): Chunk[] {
  if (given !== '' && code.startsWith(given)) {
    return segmentCode(code, segment).filter((c) => c.span.start >= given.length);
  }
  return segmentCode(code, segment);
}

/**
 * Build a labeled row from a failing mutant (METHODS §6, last item): steps before the first
 * mutated one are positive, that step is negative, and the row ends there (later steps carry no
 * reliable label). Null when the mutated step cannot be located among the steps.
 */
export function mutantRow(
  problem: Problem,
  mutant: Mutant,
  status: SandboxStatus,
  options: { given?: string; segment?: CodeSegmentBy; index?: number } = {},
): CodeLabelRow | null {
  const given = options.given ?? '';
  const steps = codeSteps(mutant.code, given, options.segment ?? 'blocks');
  const bad = firstMutatedStep(mutant.code, steps, mutant);
  if (bad < 0) return null;
  const completions = steps.slice(0, bad + 1).map((c) => c.text);
  const labels = completions.map((_, i) => i < bad);
  return makeRow(problem, `${problem.id}/mutant-${options.index ?? 0}`, completions, labels, {
    origin: 'mutant',
    mutation: { kind: mutant.kind, description: mutant.description, line: mutant.line },
    status,
    given,
  });
}

function makeRow(
  problem: Problem,
  id: string,
  completions: string[],
  labels: boolean[],
  extra: Pick<CodeLabelRow, 'origin' | 'mutation' | 'status' | 'given'>,
): CodeLabelRow {
  const prompt = renderCodeProblem(problem);
  const firstError = labels.indexOf(false);
  return {
    id,
    problemId: problem.id,
    prompt,
    completions,
    labels,
    problem: prompt,
    chunks: completions.map((text, i) => ({ text, labels: { [MUTATION_SIGNAL]: labels[i] } })),
    firstError: { [MUTATION_SIGNAL]: firstError },
    origin: extra.origin,
    ...(extra.mutation ? { mutation: extra.mutation } : {}),
    status: extra.status,
    ...(extra.given ? { given: extra.given } : {}),
  };
}

/**
 * Mutation-based step labels for one code problem: run the reference solution (it must pass),
 * then try mutants in a seeded random order until `mutantsPerProblem` of them fail the tests
 * (or `maxAttempts` were tried), and turn each failing mutant into a row with
 * {@link mutantRow}. Optionally adds the reference as an all-positive row.
 */
export async function labelByMutation(
  problem: Problem,
  mutants: readonly Mutant[],
  options: MutationLabelOptions = {},
): Promise<MutationLabelResult> {
  const sandbox = options.sandbox ?? defaultSandbox();
  const perProblem = options.mutantsPerProblem ?? 3;
  const maxAttempts = options.maxAttempts ?? 24;
  const segment = options.segment ?? 'blocks';
  const task = codeTaskOf(problem);
  const result: MutationLabelResult = {
    problemId: problem.id,
    rows: [],
    referencePassed: false,
    mutantsAvailable: mutants.length,
    mutantsTried: 0,
    mutantsFailing: 0,
    mutantsSurviving: 0,
  };
  if (task.reference === undefined) return { ...result, skipped: 'no reference solution' };
  const given = task.kind === 'humaneval' ? (task.prompt ?? '') : '';
  // Pass/fail is all a label needs: stop at the first failing test.
  const limits: Partial<SandboxLimits> = { failFast: true, ...options.limits };
  const programOf = (code: string) => (task.setup.trim() === '' ? code : `${code}\n\n${task.setup}\n`);
  // The reference is known to be right: give it room (a loaded machine must not make it "fail").
  const base = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const reference = await sandbox.run({
    program: programOf(task.reference),
    tests: task.tests,
    limits: { ...base, timeoutMs: base.timeoutMs * 4, programTimeoutMs: base.programTimeoutMs * 4 },
  });
  result.referencePassed = reference.passed;
  if (!reference.passed)
    return { ...result, skipped: `reference solution fails its tests (${reference.status})` };
  // A mutant that runs 10x longer than the reference (at least 1 s) has failed: it need not use the full limit.
  const slowest = Math.max(0, ...reference.tests.map((t) => t.durationMs ?? 0));
  limits.timeoutMs = Math.min(base.timeoutMs, Math.max(1000, Math.ceil(10 * slowest)));

  // Mutants inside the given prompt code (HumanEval helpers, docstrings) are not steps of the answer,
  // and a mutant whose change no step can be blamed for (a removed last statement) gives no row: skip both.
  const givenLines = given === '' ? 0 : given.replace(/\n$/, '').split('\n').length;
  const locatable = (m: Mutant) => firstMutatedStep(m.code, codeSteps(m.code, given, segment), m) >= 0;
  const candidates = shuffled(
    mutants.filter((m) => m.line > givenLines && locatable(m)),
    createRng(`${options.seed ?? 0}:${problem.id}`),
  ).slice(0, maxAttempts);
  if (candidates.length === 0) result.skipped = 'no mutants';

  let next = 0;
  let made = 0;
  // Try a few at a time: enough to keep the pool busy, few enough not to waste runs.
  while (made < perProblem && next < candidates.length) {
    const batch = candidates.slice(next, next + Math.max(2, perProblem - made));
    next += batch.length;
    const runs = await Promise.all(
      batch.map((m) => runCodeTask(task, programOf(m.code), { sandbox, limits })),
    );
    result.mutantsTried += batch.length;
    for (let i = 0; i < batch.length; i++) {
      if (runs[i].passed) {
        result.mutantsSurviving++;
        continue;
      }
      result.mutantsFailing++;
      if (made >= perProblem) continue;
      const row = mutantRow(problem, batch[i], runs[i].status, { given, segment, index: made });
      if (row) {
        result.rows.push(row);
        made++;
      }
    }
  }
  if (options.includeReference ?? true) {
    const steps = codeSteps(task.reference, given, segment).map((c) => c.text);
    result.rows.push(
      makeRow(
        problem,
        `${problem.id}/reference`,
        steps,
        steps.map(() => true),
        { origin: 'reference', status: 'passed', given },
      ),
    );
  }
  return result;
}
