import { UsageError } from '../core/errors.js';
import type { Sample } from '../core/model.js';
import {
  CHUNK_CLOSE,
  CHUNK_OPEN,
  codeWithoutTags,
  type Segmentation,
  splitWritten,
} from '../core/segment.js';
import type { Problem } from '../core/types.js';
import type { PolicyTemplates } from '../models/policy.js';
import {
  CODE_SOLUTION_STOP,
  codePrefixFromSteps,
  codeStepStop,
  renderCodePolicyMessages,
  renderCodePolicyPrompt,
  renderCodeProblem,
} from '../prompts/code.js';
import { peelTaggedStep, type SearchDomain } from '../search/domain.js';
import type { SearchConfig } from '../search/registry.js';
import type { Sandbox, SandboxLimits } from '../verify/code/sandbox.js';
import { checkCodeSolution, codeTaskOf } from '../verify/code/tasks.js';
import { joinCodeSteps, splitCodeBlocks } from './blocks.js';

/**
 * The code policy's prompt templates (src/prompts/code.ts): a ```python fence continued block by
 * block; under tags each block between `<chunk>` and `</chunk>` lines.
 */
export function codeTemplates(segmentation: Segmentation = 'paragraph'): PolicyTemplates {
  return {
    raw: (q, prefix) => renderCodePolicyPrompt(q, prefix, segmentation),
    chat: (q, prefix) => renderCodePolicyMessages(q, prefix, segmentation),
  };
}

/** The code policy's prompt templates under `paragraph` (blocks separated by blank lines). */
export const CODE_TEMPLATES: PolicyTemplates = codeTemplates('paragraph');

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

/** Options of {@link createCodeDomain}: where the tests run, and how the policy segments its code. */
export interface CodeDomainOptions {
  sandbox?: Sandbox;
  limits?: Partial<SandboxLimits>;
  /**
   * `paragraph` (default): blocks separated by blank lines, a step is the first new logical block.
   * `tags`: the policy puts each block between `<chunk>` and `</chunk>` lines; a step is one chunk
   * as written, prefixes are the policy's own text up to a `</chunk>`, and the tag lines are
   * removed before the tests run. The search config's `segmentation` must match.
   */
  segmentation?: Segmentation;
}

/**
 * The content of a one-chunk sample written under tags (`\n<chunk>\n…`, cut at the stop
 * `</chunk>`, which some servers include): the block with its indentation, and the piece as the
 * policy wrote it (a block written without its tag is put in one, so every prefix stays chunks).
 */
function readTaggedBlock(raw: string): { block: string; piece: string } {
  const { lead, body, tagged } = peelTaggedStep(raw);
  const block = codeWithoutTags(body)
    .replace(/^[ \t]*\r?\n/, '')
    .replace(/\s+$/, '');
  const piece = tagged
    ? `${lead}${CHUNK_OPEN}${body}${CHUNK_CLOSE}`
    : `${lead}${CHUNK_OPEN}\n${block}\n${CHUNK_CLOSE}`;
  return { block: block.trim() === '' ? '' : block, piece };
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
  const segmentation = options.segmentation ?? 'paragraph';
  const tags = segmentation === 'tags';
  return {
    name: 'code',
    templates: codeTemplates(segmentation),
    preset: CODE_SEARCH_PRESET,
    async check(problem, text) {
      const check = await checkCodeSolution(problem, tags ? codeWithoutTags(text) : text, options);
      return { answer: check.answer, correct: check.correct, detail: check };
    },
    open(problem, config) {
      if (config.segmentation !== segmentation)
        throw new UsageError(
          `the code domain splits by ${segmentation} but the search config says ${config.segmentation}: build both with the same --segmentation`,
        );
      const given = givenCode(problem);
      const givenSteps = given === '' ? [] : [given];
      const head = joinCodeSteps(givenSteps);
      const join = (chunks: readonly string[]): string => joinCodeSteps([...givenSteps, ...chunks]);
      const blocksOf = (text: string): string[] =>
        newBlocks(
          givenSteps,
          givenSteps.length > 0 && text.startsWith(head) ? text.slice(head.length) : text,
        );
      // Under tags: the policy's chunks (indentation kept); malformed tags, the blocks of the code.
      const split = (text: string): string[] => {
        if (!tags) return blocksOf(text);
        const w = splitWritten(text, 'tags', { keepIndent: true });
        return w.method === 'tags' ? w.chunks.map((c) => c.text) : blocksOf(codeWithoutTags(text));
      };
      // Under tags: each block → the piece as the policy wrote it, so a prefix is its own text.
      const written = new Map<string, string>();
      const prefix = (chunks: readonly string[]): string => {
        if (!tags) return codePrefixFromSteps([...givenSteps, ...chunks]);
        const given = codePrefixFromSteps(givenSteps, 'tags');
        return chunks.reduce(
          (out, c) =>
            out + (written.get(c) ?? `${out === '' ? '' : '\n'}${codePrefixFromSteps([c], 'tags')}`),
          given,
        );
      };
      return {
        question: renderCodeProblem(problem),
        given: givenSteps,
        stepStop: codeStepStop(segmentation),
        solutionStop: CODE_SOLUTION_STOP,
        readStep(sample, prior) {
          const cut = cutAtFence(sample);
          if (tags) {
            // A step is one chunk as the policy wrote it (its whitespace too: the piece goes into
            // later prefixes); the code ends at the closing fence.
            const fence = sample.text.indexOf('```');
            const { block, piece } = readTaggedBlock(fence >= 0 ? sample.text.slice(0, fence) : sample.text);
            if (block !== '' && !written.has(block)) written.set(block, piece);
            return { text: block, final: cut.ended };
          }
          const block = firstNewBlock([...givenSteps, ...prior], cut.text);
          if (block.trim() === '') return { text: '', final: cut.ended };
          return { text: block, final: cut.ended && block.trim() === cut.text.trim() };
        },
        // Under tags the solution stays as written (its chunks are what the judge sees).
        readSolution: (sample) => (tags ? cutAtFence(sample).text : join(split(cutAtFence(sample).text))),
        split,
        join,
        prefix,
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

/** The code domain with the default sandbox, under a segmentation. */
export function codeDomainFor(segmentation: Segmentation): SearchDomain {
  return segmentation === 'tags' ? createCodeDomain({ segmentation }) : codeDomain;
}
