import { CostLedger } from '../core/cost.js';
import type { Cost, Problem, Verdict } from '../core/types.js';
import type { StepJudge } from '../judge/types.js';
import type { Policy } from '../models/policy.js';
import type { GenerateResult } from '../models/types.js';
import {
  CODE_SOLUTION_STOP,
  CODE_STEP_STOP,
  codePrefixFromSteps,
  renderCodeProblem,
} from '../prompts/code.js';
import type { Sandbox, SandboxLimits } from '../verify/code/sandbox.js';
import { type CodeCheck, checkCodeSolution, codeTaskOf } from '../verify/code/tasks.js';
import { joinCodeSteps, splitCodeBlocks } from './blocks.js';

/** How a whole solution's step scores become one score (as in METHODS §5). */
export type CodeAggregation = 'min' | 'last' | 'mean' | 'product';

/** Pure: aggregate step scores (an empty list scores 0). */
export function aggregateStepScores(scores: readonly number[], how: CodeAggregation): number {
  if (scores.length === 0) return 0;
  switch (how) {
    case 'min':
      return Math.min(...scores);
    case 'last':
      return scores[scores.length - 1];
    case 'mean':
      return scores.reduce((a, b) => a + b, 0) / scores.length;
    case 'product':
      return scores.reduce((a, b) => a * b, 1);
  }
}

/** One step of a searched solution. */
export interface CodeSearchStep {
  text: string;
  verdict?: Verdict;
  score?: number;
  /** Samples drawn for this position before one was kept. */
  attempts: number;
  /** True for code that came with the problem (HumanEval's signature and docstring), not from the policy. */
  given?: boolean;
}

/** Outcome of a code search on one problem; always carries its cost. */
export interface CodeSearchResult {
  strategy: 'code-greedy-prm' | 'code-best-of-n';
  problemId: string;
  /** The final code. */
  finalText: string;
  /** The code the verifier extracted (null when none). */
  answer: string | null;
  correct: boolean;
  steps: CodeSearchStep[];
  check: CodeCheck;
  cost: Cost;
  stats: Record<string, number | string | boolean>;
}

export interface CodeSearchOptions {
  /** A code policy (see `createCodePolicy`): question = problem text, prefix = code so far. */
  policy: Policy;
  judge: StepJudge;
  sandbox?: Sandbox;
  limits?: Partial<SandboxLimits>;
  /** Greedy: children sampled per node before giving up on it (default 4). */
  childrenPerNode?: number;
  /** Greedy: backtracks allowed per problem (default 5). */
  maxBacktracks?: number;
  /** Greedy: most steps in a solution (default 24). */
  maxSteps?: number;
  /** Tokens per sampled step (greedy, default 256) or per solution (best-of-N, default 1024). */
  maxTokens?: number;
  temperature?: number;
  /** Best-of-N: solutions sampled (default 8). */
  n?: number;
  /** Best-of-N: how step scores become a solution score (default `min`). */
  aggregate?: CodeAggregation;
  /** Best-of-N: run every candidate's tests too (reports `oracle`: whether any candidate passes). */
  verifyAll?: boolean;
  seed?: number;
  signal?: AbortSignal;
}

/** The code that comes with a problem and that the policy continues (HumanEval's prompt), or ''. */
export function givenCode(problem: Problem): string {
  const task = codeTaskOf(problem);
  return task.kind === 'humaneval' ? (task.prompt ?? '').replace(/\s+$/, '') : '';
}

/** Cut a sample at the closing fence; `ended` says whether the code is complete. */
function cutAtFence(sample: { text: string; finishReason: string; stopReason?: string | null }): {
  text: string;
  ended: boolean;
} {
  const at = sample.text.indexOf('```');
  if (at >= 0) return { text: sample.text.slice(0, at).replace(/\s+$/, ''), ended: true };
  const ended = sample.finishReason === 'stop' && (sample.stopReason === '```' || sample.text.trim() === '');
  return { text: sample.text.replace(/\s+$/, ''), ended };
}

/** The first logical block a sample adds after `prior` steps (a sample may run on past one block). */
export function firstNewBlock(prior: readonly string[], sampleText: string): string {
  if (sampleText.trim() === '') return '';
  const before = joinCodeSteps(prior);
  const code = prior.length === 0 ? sampleText : `${before}\n${sampleText}`;
  const start = prior.length === 0 ? 0 : before.length + 1;
  const fresh = splitCodeBlocks(code).filter((c) => c.span.end > start);
  if (fresh.length === 0) return sampleText;
  const first = fresh[0];
  return code.slice(Math.max(first.span.start, start), first.span.end);
}

function record(ledger: CostLedger, result: GenerateResult): void {
  ledger.record('policy', {
    calls: result.usage.calls,
    samples: result.samples.length,
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
  });
}

/**
 * PRM-guided greedy search over logical code blocks (HGS-PRM, METHODS §5, applied to code as
 * in "Let's reward step by step"): sample one block at a time from the code policy, have the
 * judge rule on it; accept a positive block and go on; otherwise sample another, up to
 * `childrenPerNode`; with no positive child, accept the best-scored neutral one; when all
 * children are negative, backtrack (drop the last accepted block) up to `maxBacktracks` times;
 * at the root or without backtracks left, keep the best-scored child. The finished code is run
 * against the problem's tests.
 */
export async function codeGreedySearch(
  problem: Problem,
  options: CodeSearchOptions,
): Promise<CodeSearchResult> {
  const ledger = new CostLedger();
  const question = renderCodeProblem(problem);
  const given = givenCode(problem);
  const childrenPerNode = options.childrenPerNode ?? 4;
  const maxBacktracks = options.maxBacktracks ?? 5;
  const maxSteps = options.maxSteps ?? 24;
  const path: CodeSearchStep[] = given === '' ? [] : [{ text: given, attempts: 0, given: true }];
  const base = path.length;
  // Children tried at each depth (kept across backtracks, so an abandoned block is not retried blindly).
  const tried = new Map<number, Array<CodeSearchStep & { ended: boolean }>>();
  let backtracks = 0;
  let fallbacks = 0;
  let samples = 0;
  let ended = false;
  let formatFailures = 0;

  while (!ended && path.length - base < maxSteps) {
    if (options.signal?.aborted) break;
    const depth = path.length;
    const kids = tried.get(depth) ?? [];
    tried.set(depth, kids);
    const texts = path.map((s) => s.text);
    let accepted: (CodeSearchStep & { ended: boolean }) | undefined;
    while (!accepted && kids.length < childrenPerNode) {
      const result = await options.policy.continue(question, codePrefixFromSteps(texts), {
        n: 1,
        stop: CODE_STEP_STOP,
        maxTokens: options.maxTokens ?? 256,
        temperature: options.temperature ?? 0.8,
        seed: options.seed === undefined ? undefined : options.seed + samples,
        signal: options.signal,
      });
      samples++;
      record(ledger, result);
      const sample = result.samples[0];
      if (!sample) break;
      const cut = cutAtFence(sample);
      const block = firstNewBlock(texts, cut.text);
      if (block.trim() === '') {
        if (cut.ended) {
          ended = true;
          break;
        }
        kids.push({ text: '', attempts: 1, verdict: 'negative', score: 0, ended: false });
        continue;
      }
      const ruling = await options.judge.judge(problem, [...texts, block], {
        only: [depth],
        signal: options.signal,
      });
      ledger.add(ruling.cost);
      formatFailures += ruling.formatFailures;
      const j = ruling.judgments.find((x) => x.chunkIndex === depth) ?? ruling.judgments[0];
      const kid = {
        text: block,
        attempts: kids.length + 1,
        verdict: j?.verdict ?? 'neutral',
        score: j?.score ?? 0.5,
        ended: cut.ended && block === cut.text.trim(),
      };
      kids.push(kid);
      if (kid.verdict === 'positive') accepted = kid;
    }
    if (ended) break;
    const alive = kids.filter((k) => k.text !== '');
    if (!accepted) {
      const neutral = alive.filter((k) => k.verdict === 'neutral');
      if (neutral.length > 0) accepted = neutral.reduce((a, b) => ((b.score ?? 0) > (a.score ?? 0) ? b : a));
      else if (path.length > base && backtracks < maxBacktracks) {
        path.pop();
        tried.delete(depth);
        backtracks++;
        continue;
      } else if (alive.length > 0) {
        accepted = alive.reduce((a, b) => ((b.score ?? 0) > (a.score ?? 0) ? b : a));
        fallbacks++;
      } else break;
    }
    path.push({
      text: accepted.text,
      verdict: accepted.verdict,
      score: accepted.score,
      attempts: kids.length,
    });
    tried.delete(depth + 1);
    if (accepted.ended) ended = true;
  }
  const finalText = joinCodeSteps(path.map((s) => s.text));
  const check = await checkCodeSolution(problem, finalText, {
    sandbox: options.sandbox,
    limits: options.limits,
  });
  return {
    strategy: 'code-greedy-prm',
    problemId: problem.id,
    finalText,
    answer: check.answer,
    correct: check.correct,
    steps: path,
    check,
    cost: ledger.snapshot(),
    stats: { samples, backtracks, fallbacks, ended, formatFailures, steps: path.length - base },
  };
}

/**
 * Best-of-N for code: sample `n` whole solutions in one request, split each into logical blocks,
 * have the judge score every block, aggregate the scores (`min` by default), run the tests of
 * the best-scored candidate. With `verifyAll`, every candidate is run and `oracle` reports
 * whether any of them passes.
 */
export async function codeBestOfN(problem: Problem, options: CodeSearchOptions): Promise<CodeSearchResult> {
  const ledger = new CostLedger();
  const question = renderCodeProblem(problem);
  const given = givenCode(problem);
  const n = options.n ?? 8;
  const prefix = given === '' ? '' : codePrefixFromSteps([given]);
  const result = await options.policy.continue(question, prefix, {
    n,
    stop: CODE_SOLUTION_STOP,
    maxTokens: options.maxTokens ?? 1024,
    temperature: options.temperature ?? 0.8,
    seed: options.seed,
    signal: options.signal,
  });
  record(ledger, result);
  const how = options.aggregate ?? 'min';
  const candidates: Array<{ code: string; steps: CodeSearchStep[]; score: number }> = [];
  let formatFailures = 0;
  for (const sample of result.samples) {
    const body = cutAtFence(sample).text;
    const code = given === '' ? body : `${prefix}${body}`;
    const blocks = splitCodeBlocks(code).map((c) => c.text);
    if (blocks.length === 0) continue;
    const ruling = await options.judge.judge(problem, blocks, { signal: options.signal });
    ledger.add(ruling.cost);
    formatFailures += ruling.formatFailures;
    const steps: CodeSearchStep[] = blocks.map((text, i) => {
      const j = ruling.judgments.find((x) => x.chunkIndex === i);
      return {
        text,
        verdict: j?.verdict,
        score: j?.score,
        attempts: 1,
        ...(given !== '' && i === 0 ? { given: true } : {}),
      };
    });
    const scored = steps.filter((s) => !s.given && s.score !== undefined).map((s) => s.score as number);
    candidates.push({ code: joinCodeSteps(blocks), steps, score: aggregateStepScores(scored, how) });
  }
  let best = 0;
  for (let i = 1; i < candidates.length; i++) if (candidates[i].score > candidates[best].score) best = i;
  const chosen = candidates[best] ?? { code: '', steps: [], score: 0 };
  let oracle: boolean | undefined;
  let passing: number | undefined;
  let check: CodeCheck;
  if (options.verifyAll && candidates.length > 0) {
    const checks = await Promise.all(
      candidates.map((c) =>
        checkCodeSolution(problem, c.code, { sandbox: options.sandbox, limits: options.limits }),
      ),
    );
    check = checks[best];
    passing = checks.filter((c) => c.correct).length;
    oracle = passing > 0;
  } else {
    check = await checkCodeSolution(problem, chosen.code, {
      sandbox: options.sandbox,
      limits: options.limits,
    });
  }
  return {
    strategy: 'code-best-of-n',
    problemId: problem.id,
    finalText: chosen.code,
    answer: check.answer,
    correct: check.correct,
    steps: chosen.steps,
    check,
    cost: ledger.snapshot(),
    stats: {
      n: result.samples.length,
      aggregate: how,
      chosen: best,
      score: chosen.score,
      formatFailures,
      ...(oracle === undefined ? {} : { oracle, passing: passing ?? 0 }),
    },
  };
}

/**
 * Run any search strategy's outcome through the code verifier: the final text is checked
 * against the problem's tests and `answer` / `correct` are replaced (search strategies in
 * src/search check math answers by default). The sandbox verdicts ride along in `codeCheck`.
 */
export async function verifyCodeSearchResult<T extends { finalText: string }>(
  problem: Problem,
  result: T,
  options: { sandbox?: Sandbox; limits?: Partial<SandboxLimits> } = {},
): Promise<T & { answer: string | null; correct: boolean; codeCheck: CodeCheck }> {
  const check = await checkCodeSolution(problem, result.finalText, options);
  return { ...result, answer: check.answer, correct: check.correct, codeCheck: check };
}
