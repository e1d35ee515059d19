import { InputError } from '../../core/errors.js';
import type { Problem } from '../../core/types.js';
import {
  definesFunction,
  extractCode,
  mbppEntryPoint,
  promptImports,
  truncateBodyCompletion,
} from './extract.js';
import {
  defaultSandbox,
  type Sandbox,
  type SandboxLimits,
  type SandboxResult,
  type SandboxStatus,
  type SandboxTest,
  type SandboxVerdict,
} from './sandbox.js';

/** Which harness a code problem uses. */
export type CodeTaskKind = 'humaneval' | 'mbpp' | 'tests';

/**
 * A code problem ready for the sandbox: how to assemble a program from a candidate, and the
 * tests to run after it.
 */
export interface CodeTask {
  kind: CodeTaskKind;
  id: string;
  /** Function the tests call. */
  entryPoint?: string;
  /** HumanEval: the prompt (signature + docstring) that a body completion continues. */
  prompt?: string;
  /** Code run after the candidate and before the tests (MBPP `test_setup_code`). */
  setup: string;
  tests: SandboxTest[];
  /** The reference solution as a complete program, when the data set has one. */
  reference?: string;
}

/**
 * What the code checker reads from a problem: `answer` (test code) and, when the data set has
 * them, `source`, `id`, `question` and `meta` (HumanEval / MBPP fields as src/data loads them).
 */
export type CodeProblemLike = Pick<Problem, 'answer'> &
  Partial<Pick<Problem, 'id' | 'source' | 'question' | 'meta'>>;

function metaString(problem: CodeProblemLike, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = problem.meta?.[k];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

function metaStrings(problem: CodeProblemLike, ...keys: string[]): string[] | undefined {
  for (const k of keys) {
    const v = problem.meta?.[k];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  }
  return undefined;
}

/**
 * Turn a loaded code problem (src/data `loadHumanEval` / `loadMbpp`, or any `domain: 'code'`
 * problem whose `answer` is test code) into a {@link CodeTask}. `challenge` adds MBPP's
 * `challenge_test_list`.
 */
export function codeTaskOf(problem: CodeProblemLike, options: { challenge?: boolean } = {}): CodeTask {
  const source = (problem.source ?? '').toLowerCase();
  const id = problem.id ?? '(code problem)';
  if (source === 'humaneval' || metaString(problem, 'entry_point', 'entryPoint') !== undefined) {
    const entryPoint = metaString(problem, 'entry_point', 'entryPoint');
    const prompt = metaString(problem, 'prompt') ?? problem.question ?? '';
    const test = metaString(problem, 'test') ?? problem.answer;
    if (!entryPoint)
      throw new InputError(
        { file: id, field: 'meta.entry_point' },
        'HumanEval problem without an entry point',
      );
    const canonical = metaString(problem, 'canonical_solution', 'canonicalSolution');
    return {
      kind: 'humaneval',
      id,
      entryPoint,
      prompt,
      setup: '',
      tests: [{ name: 'check', code: `${test}\n\ncheck(${entryPoint})\n` }],
      reference: canonical === undefined ? undefined : prompt + canonical,
    };
  }
  const testList = metaStrings(problem, 'test_list', 'testList');
  if (source === 'mbpp' || testList) {
    const asserts = [
      ...(testList ?? problem.answer.split('\n').filter((l) => l.trim().startsWith('assert'))),
      ...(options.challenge ? (metaStrings(problem, 'challenge_test_list', 'challengeTestList') ?? []) : []),
    ];
    const code = metaString(problem, 'code');
    return {
      kind: 'mbpp',
      id,
      entryPoint: mbppEntryPoint(asserts),
      setup: metaString(problem, 'test_setup_code', 'testSetupCode') ?? '',
      tests: asserts.map((code, i) => ({ name: `assert ${i}`, code })),
      reference: code?.replace(/\r\n/g, '\n'),
    };
  }
  return { kind: 'tests', id, setup: '', tests: [{ name: 'tests', code: problem.answer }] };
}

/** The extracted candidate code and the full program the sandbox runs. */
export interface AssembledProgram {
  /** Code taken from the answer (null when there was none). */
  code: string | null;
  /** Candidate plus what the harness adds (HumanEval prompt or its imports, MBPP setup code). */
  program: string;
}

/**
 * Build the program for a candidate answer. HumanEval: an answer that defines the entry point
 * is a whole function (the prompt's imports are put in front); otherwise it is a body that
 * continues the prompt. MBPP: the code, then `test_setup_code`.
 */
export function assembleProgram(task: CodeTask, answerText: string): AssembledProgram {
  let code = extractCode(answerText, task.entryPoint);
  if (code === null) return { code: null, program: task.setup };
  if (task.kind === 'humaneval' && task.prompt !== undefined) {
    if (task.entryPoint && definesFunction(code, task.entryPoint)) {
      const imports = promptImports(task.prompt);
      return { code, program: `${imports === '' ? '' : `${imports}\n`}${code}\n` };
    }
    code = truncateBodyCompletion(code);
    return { code, program: `${task.prompt}${code}\n` };
  }
  return { code, program: task.setup.trim() === '' ? `${code}\n` : `${code}\n\n${task.setup}\n` };
}

/** The outcome of checking one candidate against a problem's tests. */
export interface CodeCheck {
  /** The extracted code (the "answer" of a code problem), null when the text had none. */
  answer: string | null;
  /** True when the program and every test passed. */
  correct: boolean;
  status: SandboxStatus;
  program: SandboxVerdict;
  tests: SandboxVerdict[];
  /** Wall-clock time of the sandbox run, ms (0 when nothing ran). */
  wallMs: number;
}

export interface CodeCheckOptions {
  sandbox?: Sandbox;
  limits?: Partial<SandboxLimits>;
  /** MBPP: also run `challenge_test_list`. */
  challenge?: boolean;
}

function fromResult(answer: string | null, r: SandboxResult): CodeCheck {
  return {
    answer,
    correct: r.passed,
    status: r.status,
    program: r.program,
    tests: r.tests,
    wallMs: r.wallMs,
  };
}

/** Run an already assembled program against a task's tests. */
export async function runCodeTask(
  task: CodeTask,
  program: string,
  options: CodeCheckOptions = {},
): Promise<SandboxResult> {
  const sandbox = options.sandbox ?? defaultSandbox();
  return sandbox.run({ program, tests: task.tests, limits: options.limits });
}

/**
 * Check a model's answer to a code problem (HumanEval, MBPP, or any `domain: 'code'` problem
 * whose `answer` is test code) by running its tests in the sandbox. Never throws for anything
 * the candidate does.
 */
export async function checkCodeSolution(
  problem: CodeProblemLike,
  completionText: string,
  options: CodeCheckOptions = {},
): Promise<CodeCheck> {
  const task = codeTaskOf(problem, options);
  const { code, program } = assembleProgram(task, completionText);
  if (code === null) {
    const verdict: SandboxVerdict = {
      name: 'program',
      status: 'error',
      message: 'no code in the answer',
      durationMs: null,
    };
    return {
      answer: null,
      correct: false,
      status: 'error',
      program: verdict,
      tests: task.tests.map((t, i) => ({ ...verdict, name: t.name ?? `test ${i}` })),
      wallMs: 0,
    };
  }
  return fromResult(code, await runCodeTask(task, program, options));
}

/** Run a problem's reference solution (HumanEval prompt + canonical solution, MBPP code) against its tests. */
export async function checkReferenceSolution(
  problem: Problem,
  options: CodeCheckOptions = {},
): Promise<CodeCheck> {
  const task = codeTaskOf(problem, options);
  if (task.reference === undefined)
    throw new InputError({ file: task.id, field: 'meta' }, 'this code problem has no reference solution');
  const program = task.setup.trim() === '' ? task.reference : `${task.reference}\n\n${task.setup}\n`;
  return fromResult(task.reference, await runCodeTask(task, program, options));
}
