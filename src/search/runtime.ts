import { CostLedger, emptyCost, emptyRoleCost } from '../core/cost.js';
import { StepwiseError, UsageError } from '../core/errors.js';
import type { ChatMessage, GenerateResult } from '../core/model.js';
import { createRng, type Rng } from '../core/rng.js';
import type { Judgment, Problem, RoleCost, Verdict } from '../core/types.js';
import { formatFailureShare, repliesOf, worldOfJudge } from '../judge/common.js';
import type { JudgeOptions, JudgeResult, StepJudge } from '../judge/types.js';
import { worldOfReply, wroteSimulated } from '../models/simulated.js';
import { checkMathAnswer } from '../verify/index.js';
import { aggregateScores, classifyStep } from './aggregate.js';
import { type DomainSession, mathDomain, type SearchDomain, type StepSample } from './domain.js';
import { type PoolJudgment, type PoolMember, SolutionPool } from './pool.js';
import type { SharedSearchConfig } from './settings.js';
import type { Backtrack, SearchChecker, SearchChunk, SearchDeps, SearchResult, TraceNode } from './types.js';

/** The default checker: final answer extracted and compared with the gold answer. */
export const defaultChecker: SearchChecker = (problem, text) => checkMathAnswer(problem.answer, text);

/** A judge's ruling on one step, already mapped to the three-way class. */
export interface StepRuling {
  verdict: Verdict;
  score: number;
  /** The judge's written analysis, where it writes one (generative judges). */
  rationale?: string;
  /** The judge gave no parsable verdict (every vote a format failure): an abstention, not "no error". */
  abstained?: boolean;
}

/**
 * The working state of one strategy on one problem: the cost ledger every model call is recorded
 * in, the seeded randomness, the trace of attempts, and the calls strategies share.
 */
export class SearchRuntime {
  readonly ledger = new CostLedger();
  readonly trace: TraceNode[] = [];
  readonly backtracks: Backtrack[] = [];
  /** Judge replies whose verdict could not be parsed, and judge replies read, summed over calls. */
  formatFailures = 0;
  judgeReplies = 0;
  private readonly rng: Rng;
  /** The kind of problem (math by default, code, …): templates, step splitter, end test, checker. */
  readonly domain: SearchDomain;
  /** This problem seen through its domain. */
  readonly session: DomainSession;
  /** The problem as the judge sees it: its text as the domain renders it for the policy. */
  private readonly judged: Problem;

  constructor(
    readonly strategy: string,
    readonly problem: Problem,
    readonly config: SharedSearchConfig,
    readonly deps: SearchDeps,
  ) {
    this.rng = createRng(`${config.seed}:${strategy}:${problem.id}`);
    this.domain = deps.domain ?? mathDomain;
    if (problem.domain === 'code' && this.domain.name !== 'code')
      throw new UsageError(
        `problem ${problem.id} is a code problem but the search runs in the ${this.domain.name} domain: pass the code domain (deps.domain = codeDomain, src/code/domain.ts)`,
      );
    this.session = this.domain.open(problem, config);
    this.judged =
      this.session.question === problem.question ? problem : { ...problem, question: this.session.question };
    const asked = deps.policy.segmentation;
    if (asked !== undefined && asked !== config.segmentation)
      throw new UsageError(
        `the policy is prompted for ${asked} segmentation but the search splits by ${config.segmentation}: build both with the same --segmentation`,
      );
  }

  /** A fresh seed for one call: distinct per call so a regenerated step is a new sample, not a cache hit. */
  /** The ledger, with the judges' worlds so far joined (their own ledgers know their replies). */
  private worldsSoFar(): CostLedger {
    this.ledger.saw(worldOfJudge(this.deps.judge));
    this.ledger.saw(worldOfJudge(this.deps.outcome));
    return this.ledger;
  }

  nextSeed(): number {
    return this.rng.int(0, 2 ** 31 - 1);
  }

  private get judge(): StepJudge {
    if (!this.deps.judge) throw new StepwiseError(`strategy ${this.strategy} needs a judge (--judge <spec>)`);
    return this.deps.judge;
  }

  /** A policy call's cost, and its world when the reply says (a marked sim-server reply is `sim`). */
  private recordPolicy(result: GenerateResult): void {
    this.ledger.record('policy', policyCost(result), worldOfReply(result));
  }

  /** The pool of whole solutions this problem's sampling strategies share (deps.pools, else its own). */
  private ownPool?: SolutionPool;
  private get pool(): SolutionPool {
    this.ownPool ??= this.deps.pools?.get(this.problem.id) ?? new SolutionPool();
    return this.ownPool;
  }

  /** Seed of pool member i's policy call or judge call: search seed, problem and i only (not the strategy). */
  private poolSeed(kind: 'policy' | 'judge', i: number): number {
    return createRng(`${this.config.seed}:pool:${kind}:${this.problem.id}:${i}`).int(0, 2 ** 31 - 1);
  }

  /** Draw pool member i: one whole solution, one call, its own seed. Not recorded here (see poolCandidates). */
  async drawPoolMember(i: number): Promise<PoolMember> {
    const c = this.config;
    const result = await this.deps.policy.continue(this.session.question, this.session.prefix([]), {
      n: 1,
      maxTokens: c.maxTokens,
      temperature: c.temperature,
      topP: c.topP,
      ...(this.session.solutionStop ? { stop: this.session.solutionStop } : {}),
      seed: this.poolSeed('policy', i),
      signal: this.deps.signal,
    });
    const sample = result.samples[0];
    return {
      text: sample ? this.session.readSolution(sample) : '',
      cost: { ...emptyCost(), policy: policyCost(result) },
      simulated: wroteSimulated(result),
    };
  }

  /** Judge pool member i's chunks: one call, its own seed. Not recorded here (see poolCandidates). */
  async judgePoolMember(i: number, chunks: readonly string[]): Promise<PoolJudgment> {
    if (chunks.length === 0) return { rulings: [], cost: emptyCost(), formatFailures: 0, replies: 0 };
    const g = this.session.given.length;
    const r = await this.judge.judge(this.judged, [...this.session.given, ...chunks], {
      ...(g > 0 ? { only: chunks.map((_, k) => k + g) } : {}),
      votes: this.config.judgeVotes,
      segmentation: this.config.segmentation,
      seed: this.poolSeed('judge', i),
      signal: this.deps.signal,
    });
    const byIndex = new Map(r.judgments.map((j) => [j.chunkIndex, j]));
    return {
      rulings: chunks.map((_, k) => this.ruling(byIndex.get(k + g))),
      cost: r.cost,
      formatFailures: r.formatFailures,
      replies: repliesOf(r),
    };
  }

  /**
   * The first n members of the problem's pool (nested: the first n of any larger pool), their
   * chunks, and with `judge` the judge's rulings on each. What each member cost to draw (and judge)
   * is recorded here, so a strategy reports what its n candidates cost on their own.
   */
  async poolCandidates(
    n: number,
    options: { judge: boolean },
  ): Promise<Array<{ text: string; chunks: string[]; rulings: StepRuling[] }>> {
    const indices = Array.from({ length: n }, (_, i) => i);
    const members = await Promise.all(indices.map((i) => this.pool.member(this, i)));
    const chunks = members.map((m) => this.split(m.text));
    const judged = options.judge
      ? await Promise.all(indices.map((i) => this.pool.judgment(this, i, chunks[i])))
      : [];
    for (const m of members) this.ledger.add(m.cost, m.simulated ? 'sim' : undefined);
    for (const j of judged) {
      this.ledger.add(j.cost);
      this.formatFailures += j.formatFailures;
      this.judgeReplies += j.replies;
    }
    return members.map((m, i) => ({ text: m.text, chunks: chunks[i], rulings: judged[i]?.rulings ?? [] }));
  }

  /** n whole solutions from the bare problem, in one call (shared prefill). */
  async sampleSolutions(n: number, temperature = this.config.temperature): Promise<string[]> {
    const c = this.config;
    const result = await this.deps.policy.continue(this.session.question, this.session.prefix([]), {
      n,
      maxTokens: c.maxTokens,
      temperature,
      topP: c.topP,
      ...(this.session.solutionStop ? { stop: this.session.solutionStop } : {}),
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.recordPolicy(result);
    return result.samples.map((s) => this.session.readSolution(s));
  }

  /**
   * The prefix the policy continues after these chunks (the domain's: math under `paragraph`, the
   * chunks joined by blank lines; under `tags` the steps as the policy wrote them, ending right
   * after `</chunk>`; code, the given code and blocks before the open fence's continuation).
   */
  prefix(chunks: readonly string[]): string {
    return this.session.prefix(chunks);
  }

  /** A whole solution's text from its chunks (with any steps given with the problem). */
  join(chunks: readonly string[]): string {
    return this.session.join(chunks);
  }

  /** A whole solution's chunk texts, as the domain splits them. */
  split(text: string): string[] {
    return this.session.split(text);
  }

  /** The final answer of a solution text (the checker's, when one is given), without checking it. */
  answerOf(text: string): string | null {
    return this.deps.checker ? this.deps.checker(this.problem, text).answer : this.session.answerOf(text);
  }

  /** n next steps after the given chunks, in one call, each stopped where the domain ends a step. */
  async sampleSteps(chunks: readonly string[], n: number): Promise<StepSample[]> {
    const c = this.config;
    const result = await this.deps.policy.continue(this.session.question, this.prefix(chunks), {
      n,
      maxTokens: c.maxStepTokens,
      temperature: c.temperature,
      topP: c.topP,
      stop: this.session.stepStop,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.recordPolicy(result);
    return result.samples.map((s) => this.session.readStep(s, chunks));
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

  /**
   * One call of `judge` on the problem as the judge sees it, the domain's given steps before
   * `chunks`, under the search's segmentation and a fresh seed; its cost and replies are counted.
   */
  private async askJudge(
    judge: StepJudge,
    chunks: readonly string[],
    options: Pick<JudgeOptions, 'only' | 'firstErrorOnly' | 'votes'>,
  ): Promise<JudgeResult> {
    const r = await judge.judge(this.judged, [...this.session.given, ...chunks], {
      ...options,
      segmentation: this.config.segmentation,
      seed: this.nextSeed(),
      signal: this.deps.signal,
    });
    this.ledger.add(r.cost);
    this.formatFailures += r.formatFailures;
    this.judgeReplies += repliesOf(r);
    return r;
  }

  /** The judge's ruling on chunk `index` of `chunks` (only that chunk is judged). */
  async judgeStep(chunks: readonly string[], index: number): Promise<StepRuling> {
    const g = this.session.given.length;
    const r = await this.askJudge(this.judge, chunks, { only: [index + g], votes: this.config.judgeVotes });
    const j = r.judgments.find((x) => x.chunkIndex === index + g);
    return this.ruling(j);
  }

  /**
   * Map a judgment to a ruling. An abstention — no judgment, or every vote a format failure — is
   * the one rule of docs/search.md ("Abstentions"): verdict `neutral`, `abstained`, and score 0,
   * so it is never accepted as approval and ranks below every judged step wherever steps or
   * candidates are ranked or aggregated.
   */
  ruling(j: Judgment | undefined): StepRuling {
    const failures = j?.formatFailures ?? 0;
    if (!j || (failures > 0 && failures >= (j.votes ?? 1)))
      return {
        verdict: 'neutral',
        score: 0,
        abstained: true,
        ...(j?.rationale ? { rationale: j.rationale } : {}),
      };
    const ruling: StepRuling = { verdict: classifyStep(j, this.config), score: j.score };
    if (j.rationale) ruling.rationale = j.rationale;
    return ruling;
  }

  /** Rulings on every chunk of a whole solution (one judge call). */
  async judgeAll(chunks: readonly string[]): Promise<StepRuling[]> {
    if (chunks.length === 0) return [];
    const g = this.session.given.length;
    const r = await this.askJudge(this.judge, chunks, {
      ...(g > 0 ? { only: chunks.map((_, i) => i + g) } : {}),
      votes: this.config.judgeVotes,
    });
    const byIndex = new Map(r.judgments.map((j) => [j.chunkIndex, j]));
    return chunks.map((_, i) => this.ruling(byIndex.get(i + g)));
  }

  /** The step judge's predicted first error of a whole solution (−1: none), judging no further than it. */
  async firstError(chunks: readonly string[]): Promise<{ firstError: number; rulings: StepRuling[] }> {
    if (chunks.length === 0) return { firstError: -1, rulings: [] };
    const g = this.session.given.length;
    const r = await this.askJudge(this.judge, chunks, {
      firstErrorOnly: true,
      votes: this.config.judgeVotes,
    });
    const rulings = r.judgments.filter((j) => j.chunkIndex >= g).map((j) => this.ruling(j));
    return { firstError: r.firstError < 0 ? -1 : Math.max(0, r.firstError - g), rulings };
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
    const last = this.session.given.length + chunks.length - 1;
    const r = await this.askJudge(outcome, chunks, { only: [last] });
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
      ...(ruling.abstained ? { abstained: true as const } : {}),
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

  /** Check a solution text: the caller's checker when given, else the domain's (code: its tests in the sandbox). */
  async check(text: string): Promise<{ answer: string | null; correct: boolean }> {
    return this.deps.checker
      ? this.deps.checker(this.problem, text)
      : await this.domain.check(this.problem, text);
  }

  /**
   * Whether a judge that reads the gold answer when simulated (deps.goldIfSimulated) turned out to
   * be answered by the simulated world. Without `allowGoldJudge` that is refused here, before the
   * result exists: the same refusal the in-process sim gets from its spec (docs/search.md).
   */
  private goldReadAtRunTime(): boolean {
    if (this.deps.judgeUsedGold) return false;
    const found = (this.deps.goldIfSimulated ?? []).filter((j) => j.simulated === true);
    if (found.length === 0) return false;
    if (!this.deps.allowGoldJudge)
      throw new UsageError(
        `${found.map((j) => j.name).join(' and ')} is answered by the simulated world (its replies are marked simulated), ` +
          'whose outcome model reads the gold answer, so the search it steers is an oracle, not a test of search. ' +
          'Pass --allow-gold-judge to run it anyway: every result then says judgeUsedGold: true.',
      );
    return true;
  }

  /** The result: the final text checked (against the gold answer, or the tests), the trace, and the cost so far. */
  async finish(
    finalText: string,
    chunks: SearchChunk[],
    stats: SearchResult['stats'] = {},
  ): Promise<SearchResult> {
    const goldNow = this.goldReadAtRunTime();
    const hasGold = this.problem.answer !== undefined && this.problem.answer !== '';
    const checked = hasGold
      ? await this.check(finalText)
      : { answer: this.answerOf(finalText), correct: false };
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
      // Every result of a judged search says how often the judge's replies had no parsable verdict.
      stats:
        this.judgeReplies > 0
          ? {
              ...stats,
              formatFailures: this.formatFailures,
              judgeReplies: this.judgeReplies,
              formatFailureRate: formatFailureShare(this.formatFailures, this.judgeReplies),
            }
          : stats,
      ...(goldNow ? { judgeUsedGold: true as const } : {}),
      // The judges' worlds join the ledger's (from their own ledgers: one reached by any name is
      // simulated once the sim server marked a reply).
      ...(this.worldsSoFar().simulated ? { simulated: true as const } : {}),
    };
  }
}

/** What one policy call cost (a cached call costs nothing). */
function policyCost(result: GenerateResult): RoleCost {
  return {
    ...emptyRoleCost(),
    calls: result.cached ? 0 : result.usage.calls,
    samples: result.cached ? 0 : result.samples.length,
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
  };
}
