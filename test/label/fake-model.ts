import type { GenerateRequest, LanguageModel } from '../../src/core/model.js';
import { createRng, hashString } from '../../src/core/rng.js';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';
import { scriptedModel } from '../support/scripted-model.js';

/**
 * An in-process policy for estimator tests: a rollout from a prefix is correct with probability
 * `successRate(prefix)`, decided by a hash of (prefix, seed, sample index), so results are
 * reproducible and depend on the seed. Correct rollouts end in `\boxed{42}`, wrong ones in
 * `\boxed{41}`. Every call is logged. A reply function over the one recording mock model
 * (test/support/scripted-model.ts).
 */
export function createFakePolicyModel(successRate: (prefix: string) => number): LanguageModel & {
  calls: Array<{ prefix: string; n: number; seed: number | undefined }>;
} {
  const calls: Array<{ prefix: string; n: number; seed: number | undefined }> = [];
  const reply = (request: GenerateRequest) => {
    const parsed = parsePolicyPrompt(request.prompt ?? request.messages ?? '');
    if (!parsed) throw new Error('not a policy prompt');
    const n = request.n ?? 1;
    calls.push({ prefix: parsed.prefix, n, seed: request.seed });
    const p = successRate(parsed.prefix);
    return Array.from({ length: n }, (_, j) => {
      const u = createRng(hashString(`${parsed.prefix}|${request.seed}|${j}`)).next();
      const text = u < p ? 'So the answer is \\boxed{42}.' : 'So the answer is \\boxed{41}.';
      return { text, completionTokens: 7 };
    });
  };
  const model = scriptedModel(reply, {
    provider: 'fake',
    modelId: 'fake-policy',
    capabilities: { logprobs: false },
  });
  return Object.assign(model, { calls });
}

/** Checker for the fake model: correct iff the text's last box holds the gold answer. */
export function boxedChecker(problem: { answer: string }, text: string): boolean {
  const m = [...text.matchAll(/\\boxed\{([^}]*)\}/g)];
  return m.length > 0 && m[m.length - 1][1] === problem.answer;
}
