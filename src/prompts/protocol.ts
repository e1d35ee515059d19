import type { ChatMessage } from '../core/model.js';
import type { Segmentation } from '../core/segment.js';

/**
 * The request protocol: what a reader of requests (the simulated world) may learn from a prompt
 * of src/prompts. Each prompt family exports a reader beside its renderer; the list of them
 * (`PROMPT_READERS`, prompts/readers.ts) is handed to the sim, which imports nothing else of
 * src/prompts. So a prompt edit changes the simulated world only through these fields, and
 * test/prompts/protocol.test.ts checks that every renderer's output reads back to them.
 */

/** A request's input as a backend receives it: a raw completion prompt or chat messages. */
export type PromptInput = string | readonly ChatMessage[];

/** Continue a solution: the problem and the solution written so far. */
export interface PolicyRequest {
  kind: 'policy';
  problem: string;
  /** The solution text so far, as written (empty: start a solution). */
  prefix: string;
  segmentation: Segmentation;
}

/** GLoRe global refinement: rewrite a draft. */
export interface GlobalRefineRequest {
  kind: 'refine';
  mode: 'global';
  problem: string;
  /** The draft as shown in the prompt. */
  draft: string;
  segmentation: Segmentation;
}

/** GLoRe local refinement: keep the chunks before the marked one, rewrite from it on. */
export interface LocalRefineRequest {
  kind: 'refine';
  mode: 'local';
  problem: string;
  /** The draft as shown in the prompt, `badMarker` and a space before the first bad chunk's content. */
  draft: string;
  /** The mark before the first bad chunk. */
  badMarker: string;
  /** The good prefix the model is to continue (empty when the request carries none). */
  prefix: string;
  segmentation: Segmentation;
}

/** StepWiser judge: is the new chunk right, given the problem and the chunks before it? */
export interface JudgeRequest {
  kind: 'judge';
  problem: string;
  history: string[];
  chunk: string;
}

/** ProcessBench critic: the index of the earliest wrong step, or −1. */
export interface CriticRequest {
  kind: 'critic';
  problem: string;
  steps: string[];
}

/** Outcome model: is the whole solution's answer right? */
export interface OrmRequest {
  kind: 'orm';
  problem: string;
  solution: string;
}

/** Discriminative PRM (`/pooling` input): one score per step. */
export interface PrmRequest {
  kind: 'prm';
  problem: string;
  steps: string[];
}

/** Everything a reader can report a request to be. */
export type PromptRequest =
  | PolicyRequest
  | GlobalRefineRequest
  | LocalRefineRequest
  | JudgeRequest
  | CriticRequest
  | OrmRequest
  | PrmRequest;

export type PromptRequestKind = PromptRequest['kind'];

/**
 * One prompt family's reader: `read` returns the request's fields, or null when the input is not
 * a prompt of this family. `kind` says what it reads before anything is read; `prm` readers read
 * `/pooling` input, every other kind reads generate requests.
 */
export interface PromptReader<K extends PromptRequestKind = PromptRequestKind> {
  readonly kind: K;
  /** The prompt family, as tests and messages name it (`policy`, `qwen-prm`, …). */
  readonly family: string;
  read(input: PromptInput): Extract<PromptRequest, { kind: K }> | null;
}

/** A reader of any kind. */
export type AnyPromptReader = { [K in PromptRequestKind]: PromptReader<K> }[PromptRequestKind];

/**
 * The readers a request is tried against, in order; the first that reads it decides what it
 * is. A loose reader (one that finds its sections anywhere in the text) belongs after the
 * strict ones.
 */
export type PromptReaders = readonly AnyPromptReader[];
