import { CostLedger } from '../core/cost.js';
import { StepwiseError, UsageError } from '../core/errors.js';
import { createRng, type Rng } from '../core/rng.js';
import { CHUNK_CLOSE, CHUNK_OPEN, splitParagraphs, splitWritten, stepStop } from '../core/segment.js';
import type { Judgment, Problem, Verdict } from '../core/types.js';
import type { StepJudge } from '../judge/types.js';
import { prefixFromChunks } from '../models/policy.js';
import { wroteSimulated } from '../models/simulated.js';
import type { ChatMessage, GenerateResult, Sample } from '../models/types.js';
import { checkMathAnswer } from '../verify/index.js';
import { aggregateScores, classifyStep } from './aggregate.js';
import type { SearchConfig } from './config.js';
import type { Backtrack, SearchChecker, SearchChunk, SearchDeps, SearchResult, TraceNode } from './types.js';

/** A sampled step: its trimmed text and whether it ends the solution. */
export interface StepSample {
  text: string;
  final: boolean;
}

/** A judge's ruling on one step, already mapped to the three-way class. */
export interface StepRuling {
  verdict: Verdict;
  score: number;
  /** The judge's written analysis, where it writes one (generative judges). */
  rationale?: string;
  /** The judge gave no parsable verdict (every vote a format failure): an abstention, not "no error". */
  abstained?: boolean;
}

/** The default checker: final answer extracted and compared with the gold answer. */
export const defaultChecker: SearchChecker = (problem, text) => checkMathAnswer(problem.answer, text);

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
 * Whether a step call's sample ends the solution. A step that stopped on the separator goes on;
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
 * The working state of one strategy on one problem: the cost ledger every model call is recorded
 * in, the seeded randomness, the trace of attempts, and the calls strategies share.
 */
export class SearchRuntime {
  readonly ledger = new CostLedger();
  readonly trace: TraceNode[] = [];
  readonly backtracks: Backtrack[] = [];
  /** Judgments whose verdict could not be parsed, summed over calls. */
  formatFailures = 0;
  private readonly rng: Rng;
  /**
   * Under tags: each step's content → the step as the policy wrote it (separator, `<chunk>`,
   * content, `</chunk>`), so a prefix is the policy's own text rather than a rebuilt one.
   */
  private readonly written = new Map<string, string>();

  constructor(
    readonly strategy: string,
    readonly problem: Problem,
    readonly config: SearchConfig,
    readonly deps: SearchDeps,
  ) {
    this.rng = createRng(`${config.seed}:${strategy}:${problem.id}`);
    const asked = deps.policy.segmentation;
    if (asked !== undefined && asked !== config.segmentation)
      throw new UsageError(
        `the policy is prompted for ${asked} segmentation but the search splits by ${config.segmentation}: build both with the same --segmentation`,
      );
  }

  /** A fresh seed for one call: distinct per call so a regenerated step is a new sample, not a cache hit. */
  nextSeed(): number {
    return this.rng.int(0, 2 ** 31 - 1);
  }

  private get judge(): StepJudge {
    if (!this.deps.judge) throw new StepwiseError(`strategy ${this.strategy} needs a judge (--judge <spec>)`);
    return this.deps.judge;
  }

  /** A policy reply came from the simulated world (a marked sim-server reply). */
  private simulated = false;

  private recordPolicy(result: GenerateResult): void {
    if (wroteSimulated(result)) this.simulated = true;
    this.ledger.record('policy', {
      calls: result.cached ? 0 : result.usage.calls,
      samples: result.cached ? 0 : result.samples.length,
      promptTokens: result.usage.promptTokens,
      completionTokens: result.usage.completionTokens,
    });
  }

  /** n whole solutions from the bare problem, in one call (shared prefill). */
  async sampleSolutions(n: number, temperature = this.config.temperature): Promise<string[]> {
    const c = this.config;
    const result = await this.deps.policy.continue(this.problem.question, '', {
      n,
      maxTokens: c.maxTokens,
      temperature,
      topP: c.topP,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.recordPolicy(result);
    return result.samples.map((s) => s.text);
  }

  /**
   * The prefix the policy continues after these chunks: under `paragraph` the chunks joined by
   * blank lines; under `tags` the steps as the policy wrote them, ending right after `</chunk>`.
   */
  prefix(chunks: readonly string[]): string {
    if (this.config.segmentation !== 'tags') return prefixFromChunks(chunks);
    return chunks
      .map((c, i) => this.written.get(c) ?? `${i === 0 ? '' : '\n'}${CHUNK_OPEN}${c}${CHUNK_CLOSE}`)
      .join('');
  }

  /** A whole solution's text from its chunks (tags: the policy's written form). */
  join(chunks: readonly string[]): string {
    return this.config.segmentation === 'tags'
      ? this.prefix(chunks)
      : joinChunks(chunks, this.config.stepSeparator);
  }

  /** A whole solution's chunk texts: its `<chunk>`s under tags (paragraphs when they are malformed), else split on the separator. */
  split(text: string): string[] {
    if (this.config.segmentation === 'tags') return splitWritten(text, 'tags').chunks.map((c) => c.text);
    return splitSolution(text, this.config.stepSeparator);
  }

  /** n next steps after the given chunks, in one call, each stopped at the step separator (`</chunk>` under tags). */
  async sampleSteps(chunks: readonly string[], n: number): Promise<StepSample[]> {
    const c = this.config;
    const stop = stepStop(c.segmentation, c.stepSeparator);
    const result = await this.deps.policy.continue(this.problem.question, this.prefix(chunks), {
      n,
      maxTokens: c.maxStepTokens,
      temperature: c.temperature,
      topP: c.topP,
      stop: [stop],
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.recordPolicy(result);
    return result.samples.map((s) => {
      const final = sampleEndsSolution(s, stop);
      if (c.segmentation !== 'tags') return { text: s.text.trim(), final };
      return { text: this.readTaggedStep(s.text), final };
    });
  }

  /**
   * The content of a step written under tags (`\n<chunk>…`, cut at the stop `</chunk>`, which
   * some servers include), remembering how it was written for later prefixes.
   */
  private readTaggedStep(raw: string): string {
    const lead = /^\s*/.exec(raw)?.[0] ?? '';
    let body = raw.slice(lead.length);
    if (body.endsWith(CHUNK_CLOSE)) body = body.slice(0, -CHUNK_CLOSE.length);
    const tagged = body.startsWith(CHUNK_OPEN);
    if (tagged) body = body.slice(CHUNK_OPEN.length);
    const content = body.replace(/<\/?chunk>/g, '').trim();
    if (content === '') return '';
    // A step the policy wrote without its tag is kept in tagged form, so every prefix stays chunks.
    const piece = tagged
      ? `${lead}${CHUNK_OPEN}${body}${CHUNK_CLOSE}`
      : `${lead}${CHUNK_OPEN}${content}${CHUNK_CLOSE}`;
    if (!this.written.has(content)) this.written.set(content, piece);
    return content;
  }

  /** A chat request to the policy's model (refinement prompts); returns the first sample's text. */
  async generateMessages(messages: ChatMessage[]): Promise<string> {
    const c = this.config;
    const result = await this.deps.policy.model.generate(
      {
        messages,
        n: 1,
        maxTokens: c.maxTokens,
        temperature: c.temperature,
        topP: c.topP,
        seed: this.nextSeed(),
      },
      { signal: this.deps.signal },
    );
    this.recordPolicy(result);
    return result.samples[0]?.text ?? '';
  }

  /** The judge's ruling on chunk `index` of `chunks` (only that chunk is judged). */
  async judgeStep(chunks: readonly string[], index: number): Promise<StepRuling> {
    const r = await this.judge.judge(this.problem, chunks, {
      only: [index],
      segmentation: this.config.segmentation,
      votes: this.config.judgeVotes,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.ledger.add(r.cost);
    this.formatFailures += r.formatFailures;
    const j = r.judgments.find((x) => x.chunkIndex === index);
    return this.ruling(j);
  }

  /** Map a judgment to a ruling; a missing judgment (unparsable verdict) is neutral at 0.5. */
  ruling(j: Judgment | undefined): StepRuling {
    if (!j) return { verdict: 'neutral', score: 0.5, abstained: true };
    const ruling: StepRuling = { verdict: classifyStep(j, this.config), score: j.score };
    if ((j.formatFailures ?? 0) > 0 && (j.formatFailures ?? 0) >= (j.votes ?? 1)) ruling.abstained = true;
    if (j.rationale) ruling.rationale = j.rationale;
    return ruling;
  }

  /** Rulings on every chunk of a whole solution (one judge call). */
  async judgeAll(chunks: readonly string[]): Promise<StepRuling[]> {
    if (chunks.length === 0) return [];
    const r = await this.judge.judge(this.problem, chunks, {
      segmentation: this.config.segmentation,
      votes: this.config.judgeVotes,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.ledger.add(r.cost);
    this.formatFailures += r.formatFailures;
    const byIndex = new Map(r.judgments.map((j) => [j.chunkIndex, j]));
    return chunks.map((_, i) => this.ruling(byIndex.get(i)));
  }

  /** The step judge's predicted first error of a whole solution (−1: none), judging no further than it. */
  async firstError(chunks: readonly string[]): Promise<{ firstError: number; rulings: StepRuling[] }> {
    if (chunks.length === 0) return { firstError: -1, rulings: [] };
    const r = await this.judge.judge(this.problem, chunks, {
      firstErrorOnly: true,
      segmentation: this.config.segmentation,
      votes: this.config.judgeVotes,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.ledger.add(r.cost);
    this.formatFailures += r.formatFailures;
    const rulings = r.judgments.map((j) => this.ruling(j));
    return { firstError: r.firstError, rulings };
  }

  /**
   * The outcome model's probability that a whole solution is correct: the score the outcome
   * judge gives its last chunk. Without an outcome judge, the step judge's product of step scores.
   */
  async outcomeScore(chunks: readonly string[]): Promise<number> {
    if (chunks.length === 0) return 0;
    const outcome = this.deps.outcome;
    if (!outcome)
      return aggregateScores(
        (await this.judgeAll(chunks)).map((r) => r.score),
        'product',
      );
    const last = chunks.length - 1;
    const r = await outcome.judge(this.problem, chunks, {
      only: [last],
      segmentation: this.config.segmentation,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.ledger.add(r.cost);
    this.formatFailures += r.formatFailures;
    const j = r.judgments.find((x) => x.chunkIndex === last) ?? r.judgments[r.judgments.length - 1];
    return j ? j.score : 0.5;
  }

  /** A judged step attempt: the judge's verdict, score and rationale on the node. */
  judgedNode(
    fields: Pick<TraceNode, 'parent' | 'depth' | 'text' | 'status' | 'final'>,
    ruling: StepRuling,
  ): TraceNode {
    return this.node({
      ...fields,
      verdict: ruling.verdict,
      score: ruling.score,
      ...(ruling.rationale ? { rationale: ruling.rationale } : {}),
    });
  }

  /** An empty step (the model wrote nothing before the separator): rejected without a judge call. */
  emptyAttempt(parent: number | null, depth: number): TraceNode {
    return this.node({ parent, depth, text: '', status: 'rejected', verdict: 'negative', score: 0 });
  }

  /** Add an attempt to the trace and return it (mutable: strategies update its status later). */
  node(fields: Omit<TraceNode, 'id'>): TraceNode {
    const n: TraceNode = { id: this.trace.length, ...fields };
    this.trace.push(n);
    return n;
  }

  /** The result: the final text checked against the gold answer, the trace, and the cost so far. */
  finish(finalText: string, chunks: SearchChunk[], stats: SearchResult['stats'] = {}): SearchResult {
    const checker = this.deps.checker ?? defaultChecker;
    const hasGold = this.problem.answer !== undefined && this.problem.answer !== '';
    const checked = checker(this.problem, finalText);
    return {
      strategy: this.strategy,
      problemId: this.problem.id,
      finalText,
      answer: checked.answer,
      ...(hasGold ? { correct: checked.correct } : {}),
      chunks,
      trace: this.trace,
      backtracks: this.backtracks,
      cost: this.ledger.snapshot(),
      stats: this.formatFailures > 0 ? { ...stats, formatFailures: this.formatFailures } : stats,
      ...(this.simulated ? { simulated: true as const } : {}),
    };
  }
}
