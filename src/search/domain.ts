import type { Sample } from '../core/model.js';
import { CHUNK_CLOSE, CHUNK_OPEN, splitParagraphs, splitWritten, stepStop } from '../core/segment.js';
import type { Problem } from '../core/types.js';
import type { PolicyTemplates } from '../models/policy.js';
import { prefixFromChunks } from '../models/policy.js';
import { extractAnswer } from '../verify/extract.js';
import { checkMathAnswer } from '../verify/index.js';
import type { SharedSearchConfig } from './settings.js';

/** A sampled step: its trimmed text and whether it ends the solution. */
export interface StepSample {
  text: string;
  final: boolean;
}

/** The verdict of a finished solution: its extracted answer and whether it is right. */
export interface DomainCheck {
  answer: string | null;
  correct: boolean;
  /** Domain-specific detail of the check (code: the sandbox's verdicts), kept in the result's stats only by count. */
  detail?: unknown;
}

/**
 * What a search strategy needs to know about the kind of problem it solves, and nothing else:
 * the strategies in this folder are the same for math and code, and take one of these.
 * - prompt templates: `templates` renders the policy request (the policy is built with them);
 * - the step splitter: {@link DomainSession.split}, `join`, `prefix`;
 * - the end-of-solution test: {@link DomainSession.readStep} says whether a step ends it;
 * - the checker: {@link SearchDomain.check}.
 */
export interface SearchDomain {
  readonly name: string;
  /** The policy's prompt templates (raw completion and chat) for this domain. */
  readonly templates?: PolicyTemplates;
  /** Config defaults of this domain, under whatever the caller sets (see `resolveSearchConfig`). */
  readonly preset?: Partial<SharedSearchConfig>;
  /** The per-problem view (a domain may remember per problem how steps were written). */
  open(problem: Problem, config: SharedSearchConfig): DomainSession;
  /** Whether the final text solves the problem (math: answer against gold; code: the tests in the sandbox). */
  check(problem: Problem, text: string): DomainCheck | Promise<DomainCheck>;
}

/** One problem seen through its domain. */
export interface DomainSession {
  /** The problem text the policy (and the judge) see. */
  readonly question: string;
  /** Steps that come with the problem and the policy continues (HumanEval's signature and docstring). Never judged or resampled. */
  readonly given: readonly string[];
  /** Stop strings of a one-step call. */
  readonly stepStop: string[];
  /** Stop strings of a whole-solution call (undefined: none). */
  readonly solutionStop?: string[];
  /** Read a one-step sample after the `prior` chunks: the new step's text and whether it ends the solution. */
  readStep(sample: Sample, prior: readonly string[]): StepSample;
  /** Read a whole-solution sample into the solution's text (without the given steps). */
  readSolution(sample: Sample): string;
  /** The chunks of a whole solution's text (without the given steps). */
  split(text: string): string[];
  /** The text of a whole solution from its chunks (with the given steps). */
  join(chunks: readonly string[]): string;
  /** The prefix the policy continues after these chunks (with the given steps). */
  prefix(chunks: readonly string[]): string;
  /** The final answer of a solution text, without judging it (for votes and trace labels). */
  answerOf(text: string): string | null;
}

/** Split a whole solution into chunk texts on the step separator (blank lines by default). */
export function splitSolution(text: string, separator: string): string[] {
  if (separator === '\n\n') return splitParagraphs(text).map((c) => c.text);
  return text
    .split(separator)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Join chunk texts back into a solution text. */
export function joinChunks(chunks: readonly string[], separator: string): string {
  return chunks.join(separator);
}

/**
 * Whether a step call's sample ends a math solution. A step that stopped on the separator goes on;
 * anything else (end of text, token limit, a stop the backend does not name) ends it, and so does
 * a step that already holds a `\boxed{}` answer. Backends that do not report which stop string
 * matched (`stopReason` undefined) are read as "stopped on the separator" unless an answer is there.
 */
export function sampleEndsSolution(sample: Sample, separator: string): boolean {
  if (/\\boxed\s*\{/.test(sample.text)) return true;
  if (sample.finishReason !== 'stop') return true;
  if (sample.stopReason === undefined) return false;
  return sample.stopReason !== separator;
}

/**
 * A one-step sample written under tags (`\n<chunk>…`, cut at the stop `</chunk>`, which some
 * servers include) taken apart: its leading whitespace, what lies between the tags, and whether
 * the policy opened it with `<chunk>` (math and code both read their steps this way).
 */
export function peelTaggedStep(raw: string): { lead: string; body: string; tagged: boolean } {
  const lead = /^\s*/.exec(raw)?.[0] ?? '';
  let body = raw.slice(lead.length);
  if (body.endsWith(CHUNK_CLOSE)) body = body.slice(0, -CHUNK_CLOSE.length);
  const tagged = body.startsWith(CHUNK_OPEN);
  if (tagged) body = body.slice(CHUNK_OPEN.length);
  return { lead, body, tagged };
}

/**
 * Math: solutions in blank-line paragraphs (or `<chunk>` tags), a final `\boxed{}` answer checked
 * against the gold answer. The policy is the math solution prompt of src/prompts/policy.ts.
 */
export const mathDomain: SearchDomain = {
  name: 'math',
  check: (problem, text) => checkMathAnswer(problem.answer, text),
  open(problem, config) {
    const tags = config.segmentation === 'tags';
    const stop = stepStop(config.segmentation, config.stepSeparator);
    // Under tags: each step's content → the step as the policy wrote it (separator, `<chunk>`,
    // content, `</chunk>`), so a prefix is the policy's own text rather than a rebuilt one.
    const written = new Map<string, string>();
    const prefix = (chunks: readonly string[]): string =>
      tags
        ? chunks
            .map((c, i) => written.get(c) ?? `${i === 0 ? '' : '\n'}${CHUNK_OPEN}${c}${CHUNK_CLOSE}`)
            .join('')
        : prefixFromChunks(chunks);
    /** The content of a step written under tags (see {@link peelTaggedStep}). */
    const readTaggedStep = (raw: string): string => {
      const { lead, body, tagged } = peelTaggedStep(raw);
      const content = body.replace(/<\/?chunk>/g, '').trim();
      if (content === '') return '';
      // A step the policy wrote without its tag is kept in tagged form, so every prefix stays chunks.
      const piece = tagged
        ? `${lead}${CHUNK_OPEN}${body}${CHUNK_CLOSE}`
        : `${lead}${CHUNK_OPEN}${content}${CHUNK_CLOSE}`;
      if (!written.has(content)) written.set(content, piece);
      return content;
    };
    return {
      question: problem.question,
      given: [],
      stepStop: [stop],
      readStep: (sample) => ({
        text: tags ? readTaggedStep(sample.text) : sample.text.trim(),
        final: sampleEndsSolution(sample, stop),
      }),
      readSolution: (sample) => sample.text,
      split: (text) =>
        tags
          ? splitWritten(text, 'tags').chunks.map((c) => c.text)
          : splitSolution(text, config.stepSeparator),
      join: (chunks) => (tags ? prefix(chunks) : joinChunks(chunks, config.stepSeparator)),
      prefix,
      answerOf: (text) => extractAnswer(text),
    };
  },
};
