import { StepwiseError, UsageError } from '../core/errors.js';
import type {
  Capabilities,
  ChatMessage,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  ModelWarning,
  Sample,
  Usage,
} from '../core/model.js';
import { createRng, hashString, type Rng } from '../core/rng.js';
import { writtenPrefix } from '../core/segment.js';
import type { PromptInput, PromptReaders, PromptRequest } from '../prompts/protocol.js';
import { prepareSimCriticReply, prepareSimJudgeReply, prepareSimOrmReply, simPrmScores } from './judges.js';
import {
  DEFAULT_SIM_OPTIONS,
  formatSimSpec,
  parseSimSpec,
  resolveSimOptions,
  type SimOptions,
} from './options.js';
import { prepareSimContinuation, simChunksOf } from './policy.js';
import { countSimMessageTokens, countSimTokens, truncateSimTokens } from './tokens.js';
import { lookupSimQuestion, SIM_MAX_OPERATIONS, simQuestionOverLimit } from './world.js';

/** Which simulated model answered a request (the metrics of the server count by it). */
export type SimRole = 'policy' | 'refine' | 'judge' | 'critic' | 'orm' | 'prm';

/** A generate result with the role that answered it. */
export interface SimGenerateResult extends GenerateResult {
  role: SimRole;
}

/** Source of seeds for requests that carry none (a counter, so a run in one order reproduces). */
export type SeedStream = () => string;

/** A counter-based seed stream. */
export function createSeedStream(label: string | number = 0): SeedStream {
  let i = 0;
  return () => `auto:${label}:${i++}`;
}

const NOT_SIM_POLICY =
  'Simulated policy: this question is not from the simulated world, so the answer below is a seeded guess.';

/** The request's text as one string, for hashing. */
function requestKey(request: GenerateRequest): string {
  if (request.prompt !== undefined) return `p:${request.prompt}`;
  return `m:${(request.messages ?? []).map((m) => `${m.role}\u0000${m.content}`).join('\u0001')}`;
}

/** The chunks before the marked chunk of a local-refinement draft. */
function goodPrefixOfDraft(draft: string, badMarker: string): string[] {
  const chunks = simChunksOf(draft);
  const bad = chunks.findIndex((c) => c.startsWith(badMarker));
  return bad < 0 ? chunks : chunks.slice(0, bad);
}

/** A generate request as the first reader that recognises it reads it; null when none does. */
function readGenerateRequest(
  readers: PromptReaders,
  input: PromptInput,
): Exclude<PromptRequest, { kind: 'prm' }> | null {
  for (const reader of readers) {
    if (reader.kind === 'prm') continue; // pooling input, not a prompt to generate from
    const request = reader.read(input);
    if (request) return request;
  }
  return null;
}

/** `/pooling` input as the first PRM reader that recognises it reads it; null when none does. */
function readPoolingInput(
  readers: PromptReaders,
  input: string,
): Extract<PromptRequest, { kind: 'prm' }> | null {
  for (const reader of readers) {
    if (reader.kind !== 'prm') continue;
    const request = reader.read(input);
    if (request) return request;
  }
  return null;
}

/** One sample's text before stop strings and max_tokens, and where stop matching may begin. */
type Draw = (rng: Rng) => { text: string; searchFrom: number };

/** The answer to a policy or refine prompt whose question is not from the simulated world. */
const notSimPolicy: Draw = (rng) => ({
  text: `${NOT_SIM_POLICY}\n\nThe answer is \\boxed{${rng.int(0, 100)}}.`,
  searchFrom: 0,
});

/** A UsageError when `question` is shaped like a sim question with more operations than the world answers. */
function refuseOverlongQuestion(question: string): void {
  const n = simQuestionOverLimit(question);
  if (n !== null)
    throw new UsageError(
      `sim: the question has ${n} operations; the simulated world writes at most 40 and answers at most ${SIM_MAX_OPERATIONS}`,
    );
}

/**
 * What answers a request, and how each sample is drawn. Everything that reads the request (the
 * prefix, the history, the steps) is read here, once; a draw only samples.
 */
function routeRequest(
  options: SimOptions,
  readers: PromptReaders,
  input: PromptInput,
): { role: SimRole; draw: Draw } | null {
  const request = readGenerateRequest(readers, input);
  if (!request) return null;
  refuseOverlongQuestion(request.problem);
  switch (request.kind) {
    case 'policy': {
      const problem = lookupSimQuestion(request.problem);
      if (!problem) return { role: 'policy', draw: notSimPolicy };
      const continuation = prepareSimContinuation(problem, options, request.prefix, request.segmentation);
      return {
        role: 'policy',
        draw: (rng) => {
          const { lead, text } = continuation(rng);
          return { text, searchFrom: lead.length };
        },
      };
    }
    case 'refine': {
      const problem = lookupSimQuestion(request.problem);
      if (!problem) return { role: 'refine', draw: notSimPolicy };
      const seg = request.segmentation;
      if (request.mode === 'global') {
        const continuation = prepareSimContinuation(problem, options, '', seg);
        return { role: 'refine', draw: (rng) => ({ text: continuation(rng).text, searchFrom: 0 }) };
      }
      // Local: continue the assistant prefix when there is one; otherwise write the good prefix
      // of the draft and continue from it (a raw-text request has no assistant turn).
      const { prefix } = request;
      if (prefix !== '') {
        const continuation = prepareSimContinuation(problem, options, prefix, seg);
        return {
          role: 'refine',
          draw: (rng) => {
            const { text, lead } = continuation(rng);
            return { text, searchFrom: lead.length };
          },
        };
      }
      const written = writtenPrefix(goodPrefixOfDraft(request.draft, request.badMarker), seg);
      const continuation = prepareSimContinuation(problem, options, written, seg);
      return {
        role: 'refine',
        draw: (rng) => ({ text: written + continuation(rng).text, searchFrom: 0 }),
      };
    }
    case 'critic': {
      const reply = prepareSimCriticReply(request.problem, request.steps, options);
      return { role: 'critic', draw: (rng) => ({ text: reply(rng), searchFrom: 0 }) };
    }
    case 'orm': {
      const reply = prepareSimOrmReply(request.problem, request.solution, options);
      return { role: 'orm', draw: (rng) => ({ text: reply(rng), searchFrom: 0 }) };
    }
    case 'judge': {
      const reply = prepareSimJudgeReply(request.problem, request.history, request.chunk, options);
      return { role: 'judge', draw: (rng) => ({ text: reply(rng), searchFrom: 0 }) };
    }
  }
}

/** Apply stop strings (searched from `searchFrom`) and then max_tokens to one sample's text. */
export function finishSimSample(
  full: string,
  searchFrom: number,
  stop: readonly string[] | undefined,
  maxTokens: number | undefined,
  includeStop = false,
): Sample {
  let text = full;
  let stopReason: string | null = null;
  if (stop && stop.length > 0) {
    let at = -1;
    for (const s of stop) {
      if (s === '') continue;
      const i = full.indexOf(s, searchFrom);
      if (i >= 0 && (at < 0 || i < at || (i === at && stopReason !== null && s.length > stopReason.length))) {
        at = i;
        stopReason = s;
      }
    }
    if (at >= 0 && stopReason !== null) text = full.slice(0, includeStop ? at + stopReason.length : at);
  }
  let finishReason: FinishReason = 'stop';
  if (maxTokens !== undefined) {
    const cut = truncateSimTokens(text, maxTokens);
    if (cut.truncated) {
      text = cut.text;
      finishReason = 'length';
      stopReason = null;
    }
  }
  return { text, finishReason, stopReason, completionTokens: countSimTokens(text) };
}

/**
 * Answer one generate request with the simulated world (what both the in-process model and the
 * server do). Sample i draws from an Rng seeded by (world seed, request seed, i, request text);
 * a request without a seed takes one from `stream`; temperature 0 makes every sample the one
 * drawn from the request text alone. `readers` say what a request is (prompts/protocol.ts).
 * Throws UsageError for a malformed request and StepwiseError when no reader reads the prompt.
 */
export function simGenerate(
  options: SimOptions,
  readers: PromptReaders,
  request: GenerateRequest,
  stream: SeedStream,
): SimGenerateResult {
  const steps = simGenerateSteps(options, readers, request, stream);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link simGenerate} a sample at a time: yields each sample as it is drawn and returns the
 * result. The server draws a large request in slices between which it answers other requests
 * (and notices SIGTERM). Everything up to the first sample (routing, the seed) happens on the
 * first `next()`.
 */
export function* simGenerateSteps(
  options: SimOptions,
  readers: PromptReaders,
  request: GenerateRequest,
  stream: SeedStream,
): Generator<Sample, SimGenerateResult, void> {
  const hasPrompt = request.prompt !== undefined;
  const hasMessages = request.messages !== undefined;
  if (hasPrompt === hasMessages)
    throw new UsageError('sim: a request needs exactly one of prompt or messages');
  const input = hasPrompt ? (request.prompt as string) : (request.messages as ChatMessage[]);
  const route = routeRequest(options, readers, input);
  if (!route) {
    throw new StepwiseError(
      'sim: the request is not a prompt the simulated world answers (policy, judge, critic, outcome-model or refine prompt of src/prompts)',
    );
  }
  const n = request.n ?? 1;
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`sim: n must be a positive integer, got ${request.n}`);
  const maxTokens = request.maxTokens;
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 0))
    throw new UsageError(`sim: max_tokens must be a non-negative integer, got ${maxTokens}`);
  const greedy = request.temperature === 0;
  const seedPart = greedy ? 'greedy' : request.seed !== undefined ? `seed:${request.seed}` : stream();
  const base = hashString(`${options.seed}|${seedPart}|${requestKey(request)}`);
  const includeStop = request.extra?.include_stop_str_in_output === true;
  const samples: Sample[] = [];
  let completionTokens = 0;
  let greedySample: Sample | undefined;
  for (let i = 0; i < n; i++) {
    let sample: Sample;
    if (greedy && greedySample) sample = { ...greedySample };
    else {
      const { text, searchFrom } = route.draw(createRng(`${base}:${greedy ? 0 : i}`));
      sample = finishSimSample(text, searchFrom, request.stop, maxTokens, includeStop);
      greedySample = sample;
    }
    completionTokens += sample.completionTokens;
    samples.push(sample);
    yield sample;
  }
  const promptTokens = hasPrompt
    ? countSimTokens(request.prompt as string)
    : countSimMessageTokens(request.messages ?? []);
  const warnings: ModelWarning[] = [];
  if (request.logprobs !== undefined)
    warnings.push({
      type: 'unsupported-setting',
      feature: 'logprobs',
      details: 'sim: logprobs are not supported; none returned',
    });
  const usage: Usage = { calls: 1, promptTokens, completionTokens };
  return { samples, usage, warnings, role: route.role };
}

/**
 * Answer a vLLM `/pooling` request in the Qwen2.5-Math-PRM input format: one `[p_neg, p_pos]`
 * row per step (read by the `prm` readers of `readers`). Deterministic per (world seed, input).
 * Throws StepwiseError for other input.
 */
export function simPool(
  options: SimOptions,
  readers: PromptReaders,
  input: string,
): { data: number[][]; usage: Usage } {
  const parsed = readPoolingInput(readers, input);
  if (!parsed)
    throw new StepwiseError(
      'sim: /pooling input is not in the Qwen2.5-Math-PRM format (steps joined by <extra_0>)',
    );
  const rng = createRng(`${options.seed}|pool|${input}`);
  const scores = simPrmScores(parsed.problem, parsed.steps, options, rng);
  return {
    data: scores.map((s) => [1 - s, s]),
    usage: { calls: 1, promptTokens: countSimTokens(input), completionTokens: 0 },
  };
}

/** What `createSimModel` accepts: a spec string (`sim?step_error=0.2`) or options. */
export type SimModelInput = string | (Partial<SimOptions> & { name?: string });

/** Capabilities of the simulated model. */
export const SIM_CAPABILITIES: Readonly<Capabilities> = Object.freeze({
  n: true,
  logprobs: false,
  echo: false,
  continueAssistant: true,
  score: false,
  pooling: true,
});

/** The in-process simulated model, with its resolved options. */
export interface SimModel extends LanguageModel {
  readonly options: Readonly<SimOptions>;
}

/**
 * The simulated world as a `LanguageModel` (provider `sim`): it routes each request by content —
 * policy prompt, GLoRe refine prompt, critic prompt, outcome-model prompt, StepWiser judge
 * prompt — and answers `/pooling`-style PRM input through `pool()`. It reads requests only
 * through `readers` (`PROMPT_READERS` of src/prompts, handed in by the composition root), never
 * by importing a prompt module. Spec syntax: `sim[:name][?key=value&…]` (docs/sim.md).
 */
export function createSimModel(spec: SimModelInput, readers: PromptReaders): SimModel {
  let options: SimOptions;
  let modelId: string;
  if (typeof spec === 'string') {
    const parsed = parseSimSpec(spec);
    options = parsed.options;
    modelId = spec.trim() || 'sim';
  } else {
    const { name, ...rest } = spec;
    options = resolveSimOptions(rest);
    modelId = name ?? formatSimSpec(options);
  }
  const stream = createSeedStream(options.seed);
  return {
    specificationVersion: 'v1',
    provider: 'sim',
    modelId,
    world: 'sim',
    capabilities: SIM_CAPABILITIES,
    options,
    async generate(request, callOptions) {
      callOptions?.signal?.throwIfAborted();
      const { role: _role, ...result } = simGenerate(options, readers, request, stream);
      return result;
    },
    async pool(input, callOptions) {
      callOptions?.signal?.throwIfAborted();
      return simPool(options, readers, input);
    },
    async close() {},
  };
}

export { DEFAULT_SIM_OPTIONS };
