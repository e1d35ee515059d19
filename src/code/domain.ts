import type { Sample } from '../core/model.js';
import type { Problem } from '../core/types.js';
import type { PolicyTemplates } from '../models/policy.js';
import {
  CODE_SOLUTION_STOP,
  CODE_STEP_STOP,
  codePrefixFromSteps,
  renderCodePolicyMessages,
  renderCodePolicyPrompt,
  renderCodeProblem,
} from '../prompts/code.js';
import type { SearchConfig } from '../search/config.js';
import type { SearchDomain } from '../search/domain.js';
import type { Sandbox, SandboxLimits } from '../verify/code/sandbox.js';
import { checkCodeSolution, codeTaskOf } from '../verify/code/tasks.js';
import { joinCodeSteps, splitCodeBlocks } from './blocks.js';

/** The code policy's prompt templates (src/prompts/code.ts): a ```python fence continued block by block. */
export const CODE_TEMPLATES: PolicyTemplates = {
  raw: renderCodePolicyPrompt,
  chat: renderCodePolicyMessages,
};

/**
 * The code preset of `SearchConfig`: a logical block is a few lines, a whole function rarely more
 * than a page. Every other knob (children per node, steps, N, aggregation) is the shared default.
 */
export const CODE_SEARCH_PRESET: Readonly<Partial<SearchConfig>> = Object.freeze({
  maxStepTokens: 256,
  maxTokens: 1024,
});

/** The code that comes with a problem and that the policy continues (HumanEval's prompt), or ''. */
export function givenCode(problem: Problem): string {
  const task = codeTaskOf(problem);
  return task.kind === 'humaneval' ? (task.prompt ?? '').replace(/\s+$/, '') : '';
}

/** Cut a sample at the closing fence; `ended` says whether the code is complete. */
export function cutAtFence(sample: Pick<Sample, 'text' | 'finishReason' | 'stopReason'>): {
  text: string;
  ended: boolean;
} {
  const at = sample.text.indexOf('```');
  if (at >= 0) return { text: sample.text.slice(0, at).replace(/\s+$/, ''), ended: true };
  const ended = sample.finishReason === 'stop' && (sample.stopReason === '```' || sample.text.trim() === '');
  return { text: sample.text.replace(/\s+$/, ''), ended };
}

/** The logical blocks `text` adds after the `prior` steps (indentation kept, relative to the prior code). */
export function newBlocks(prior: readonly string[], text: string): string[] {
  if (text.trim() === '') return [];
  const before = joinCodeSteps(prior);
  const code = prior.length === 0 ? text : `${before}\n${text}`;
  const start = prior.length === 0 ? 0 : before.length + 1;
  return splitCodeBlocks(code)
    .filter((c) => c.span.end > start)
    .map((c) => code.slice(Math.max(c.span.start, start), c.span.end))
    .filter((b) => b.trim() !== '');
}

/** The first logical block a sample adds after `prior` steps (a sample may run on past one block). */
export function firstNewBlock(prior: readonly string[], sampleText: string): string {
  if (sampleText.trim() === '') return '';
  return newBlocks(prior, sampleText)[0] ?? sampleText;
}

/** Options of {@link createCodeDomain}: where the tests run. */
export interface CodeDomainOptions {
  sandbox?: Sandbox;
  limits?: Partial<SandboxLimits>;
}

/**
 * Code as a search domain (HumanEval, MBPP, any `domain: 'code'` problem): the policy writes a
 * Python solution one logical block at a time inside a ```python fence (src/prompts/code.ts); a
 * step is the first new logical block of a sample (src/code/blocks.ts), the solution ends at the
 * closing fence, HumanEval's signature and docstring are given steps the policy continues, and
 * the checker runs the problem's tests in the sandbox (src/verify/code). The strategies of
 * src/search run on it unchanged: `greedyPrmSearch(problem, config, { ...deps, domain })`.
 */
export function createCodeDomain(options: CodeDomainOptions = {}): SearchDomain {
  return {
    name: 'code',
    templates: CODE_TEMPLATES,
    preset: CODE_SEARCH_PRESET,
    async check(problem, text) {
      const check = await checkCodeSolution(problem, text, options);
      return { answer: check.answer, correct: check.correct, detail: check };
    },
    open(problem) {
      const given = givenCode(problem);
      const givenSteps = given === '' ? [] : [given];
      const head = joinCodeSteps(givenSteps);
      const join = (chunks: readonly string[]): string => joinCodeSteps([...givenSteps, ...chunks]);
      const split = (text: string): string[] =>
        newBlocks(
          givenSteps,
          givenSteps.length > 0 && text.startsWith(head) ? text.slice(head.length) : text,
        );
      return {
        question: renderCodeProblem(problem),
        given: givenSteps,
        stepStop: CODE_STEP_STOP,
        solutionStop: CODE_SOLUTION_STOP,
        readStep(sample, prior) {
          const cut = cutAtFence(sample);
          const block = firstNewBlock([...givenSteps, ...prior], cut.text);
          if (block.trim() === '') return { text: '', final: cut.ended };
          return { text: block, final: cut.ended && block.trim() === cut.text.trim() };
        },
        readSolution: (sample) => join(split(cutAtFence(sample).text)),
        split,
        join,
        prefix: (chunks) => codePrefixFromSteps([...givenSteps, ...chunks]),
        answerOf(text) {
          const code = join(split(text));
          return code.trim() === '' ? null : code;
        },
      };
    },
  };
}

/** The code domain with the default sandbox. */
export const codeDomain: SearchDomain = createCodeDomain();
