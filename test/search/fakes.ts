import { emptyCost } from '../../src/core/cost.js';
import type { GenerateRequest, LanguageModel, Sample } from '../../src/core/model.js';
import { createRng } from '../../src/core/rng.js';
import type { Judgment, Problem } from '../../src/core/types.js';
import type { JudgeOptions, JudgeResult, StepJudge } from '../../src/judge/types.js';
import { createPolicy, type Policy } from '../../src/models/policy.js';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';
import { parseRefinePrompt } from '../../src/prompts/refine.js';
import { scriptedModel } from '../support/scripted-model.js';

/**
 * A tiny scripted world for unit tests: a problem of H steps; each step the fake policy writes
 * is `step k ok` or, with probability `stepError`, `step k bad`; the last step carries
 * `\boxed{42}` when no step of the solution is bad, `\boxed{13}` otherwise. The fake judge reads
 * the word `bad`. The policy is a reply function over the one recording mock model
 * (test/support/scripted-model.ts).
 */
export interface FakeWorldOptions {
  steps?: number;
  stepError?: number;
  /** Override the step text: (question, index of the step, draw) → text without the final answer. */
  step?: (index: number, draw: number) => string;
}

export interface FakeCounters {
  calls: number;
  samples: number;
  promptTokens: number;
  completionTokens: number;
  requests: GenerateRequest[];
}

const tokens = (s: string): number => (s.trim() === '' ? 0 : s.trim().split(/\s+/).length);

export function fakeProblem(id = 'p1', steps = 4): Problem {
  return {
    id,
    question: `Fake problem ${id} with ${steps} steps`,
    answer: '42',
    domain: 'math',
    source: 'fake',
  };
}

function stepsOf(question: string, fallback: number): number {
  const m = /with (\d+) steps/.exec(question);
  return m ? Number(m[1]) : fallback;
}

export function fakePolicyModel(opts: FakeWorldOptions = {}): {
  model: LanguageModel;
  counters: FakeCounters;
} {
  const stepError = opts.stepError ?? 0.1;
  const writeStep = (index: number, draw: number): string =>
    opts.step ? opts.step(index, draw) : `step ${index + 1} ${draw < stepError ? 'bad' : 'ok'}`;
  const promptTokens = (req: GenerateRequest): number =>
    tokens(req.prompt ?? (req.messages ?? []).map((m) => m.content).join(' '));
  const model = scriptedModel(
    (req) => {
      const rng = createRng(`${req.seed ?? 0}:${JSON.stringify(req.prompt ?? req.messages)}`);
      let question: string;
      let prefix: string;
      const refine = req.messages ? parseRefinePrompt(req.messages) : null;
      if (refine) {
        question = refine.question;
        prefix = refine.prefix;
      } else {
        const parsed = parsePolicyPrompt(req.prompt ?? req.messages ?? '');
        if (!parsed) throw new Error('fake policy: not a policy prompt');
        ({ question, prefix } = parsed);
      }
      const done = prefix
        .split('\n\n')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const H = stepsOf(question, opts.steps ?? 4);
      const stepMode = req.stop?.includes('\n\n') ?? false;
      const samples: Sample[] = [];
      for (let k = 0; k < (req.n ?? 1); k++) {
        const written: string[] = [];
        let i = done.length;
        let bad = done.some((d) => d.includes('bad'));
        for (; i < H; i++) {
          let t = writeStep(i, rng.next());
          if (t.includes('bad')) bad = true;
          if (i === H - 1) t += ` so the answer is \\boxed{${bad ? 13 : 42}}`;
          written.push(t);
          if (stepMode) break;
        }
        const text = written.join('\n\n');
        const last = i >= H - 1;
        samples.push({
          text,
          finishReason: 'stop',
          stopReason: stepMode && !last ? '\n\n' : null,
          completionTokens: tokens(text),
        });
      }
      counters.calls++;
      counters.samples += samples.length;
      counters.promptTokens += promptTokens(req);
      counters.completionTokens += samples.reduce((s, x) => s + x.completionTokens, 0);
      return samples;
    },
    { provider: 'fake', modelId: 'fake-policy', capabilities: { logprobs: false }, promptTokens },
  );
  const counters: FakeCounters = {
    calls: 0,
    samples: 0,
    promptTokens: 0,
    completionTokens: 0,
    requests: model.requests,
  };
  return { model, counters };
}

export function fakePolicy(opts: FakeWorldOptions = {}): { policy: Policy; counters: FakeCounters } {
  const { model, counters } = fakePolicyModel(opts);
  return { policy: createPolicy(model), counters };
}

export interface FakeJudgeCalls {
  calls: number;
  options: JudgeOptions[];
  chunks: string[][];
}

/**
 * A judge that calls a chunk negative when it contains `bad`, flipping with probability
 * 1 − sensitivity (bad chunks) or 1 − specificity (good chunks), seeded by the call's seed. Or
 * a fully scripted verdict function. Each chunk judged costs 10 prompt and 2 completion tokens.
 */
export function fakeJudge(
  opts: {
    sensitivity?: number;
    specificity?: number;
    verdict?: (chunk: string, index: number, call: number) => { verdict: Judgment['verdict']; score: number };
  } = {},
): { judge: StepJudge; calls: FakeJudgeCalls } {
  const calls: FakeJudgeCalls = { calls: 0, options: [], chunks: [] };
  const sens = opts.sensitivity ?? 1;
  const spec = opts.specificity ?? 1;
  const judge: StepJudge = {
    name: 'fake',
    scalar: false,
    async judge(_problem, chunks, options: JudgeOptions = {}): Promise<JudgeResult> {
      const call = calls.calls++;
      calls.options.push(options);
      calls.chunks.push([...chunks]);
      const rng = createRng(`judge:${options.seed ?? 0}:${chunks.join('|')}`);
      const indices = options.only ?? chunks.map((_, i) => i);
      const judgments: Judgment[] = [];
      for (const i of indices) {
        let j: { verdict: Judgment['verdict']; score: number };
        if (opts.verdict) j = opts.verdict(chunks[i], i, call);
        else {
          const bad = chunks[i].includes('bad');
          const negative = bad ? rng.chance(sens) : !rng.chance(spec);
          j = { verdict: negative ? 'negative' : 'positive', score: negative ? 0 : 1 };
        }
        judgments.push({ chunkIndex: i, ...j });
        if (options.firstErrorOnly && j.verdict === 'negative') break;
      }
      const cost = emptyCost();
      cost.judge = {
        calls: 1,
        samples: judgments.length,
        promptTokens: 10 * judgments.length,
        completionTokens: 2 * judgments.length,
      };
      const firstError = judgments.find((j) => j.verdict === 'negative')?.chunkIndex ?? -1;
      return { judgments, firstError, cost, formatFailures: 0 };
    },
  };
  return { judge, calls };
}

/** A checker that needs nothing but the last `\boxed{…}`: keeps these tests independent of answer-equivalence rules. */
export const boxedChecker = (p: Problem, text: string): { answer: string | null; correct: boolean } => {
  const all = [...text.matchAll(/\\boxed\{([^}]*)\}/g)];
  const answer = all.length > 0 ? all[all.length - 1][1] : null;
  return { answer, correct: answer === p.answer };
};
