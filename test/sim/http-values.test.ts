import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LanguageModel } from '../../src/core/model.js';
import { prefixFromChunks, renderPolicyPrompt } from '../../src/prompts/index.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  DEFAULT_SIM_OPTIONS,
  exactStepValues,
  generateSimProblems,
  isSimSolutionCorrect,
  type SimProblem,
  type SimServer,
  sampleSimSolution,
  startSimServer,
} from '../../src/sim/index.js';
import { providers } from '../support/providers.js';

/**
 * Issue #4, acceptance 5: step values estimated by sampling the sim policy over HTTP (2,000
 * rollouts per prefix, 50 prefixes) agree with the world's exact values within 4 standard
 * errors. The client is the project's OpenAI-compatible backend (`openai:` spec), uncached.
 */
describe('Monte Carlo step values over HTTP agree with exact values', () => {
  let server: SimServer;
  let model: LanguageModel;
  beforeAll(async () => {
    server = await startSimServer({ readers: PROMPT_READERS, seed: 17 });
    model = await providers.languageModel('openai:sim', {
      noCache: true,
      settings: { baseUrl: server.baseURL },
    });
  });
  afterAll(async () => {
    await model.close?.();
    await server.close();
  });

  it('50 prefixes × 2,000 rollouts, one request with n = 2000 per prefix', async () => {
    const M = 2000;
    // 50 prefixes from sampled solutions of 10 problems: every 2nd prefix of each, wrong ones included.
    const prefixes: Array<{ problem: SimProblem; chunks: string[]; exact: number }> = [];
    const problems = generateSimProblems({ count: 40, seed: 17, minSteps: 4, maxSteps: 10 });
    for (const [i, p] of problems.entries()) {
      const sol = sampleSimSolution(p, DEFAULT_SIM_OPTIONS, 500 + i);
      const exact = exactStepValues(p, sol);
      for (let k = 0; k < sol.length && prefixes.length < 50; k += 2)
        prefixes.push({ problem: p, chunks: sol.slice(0, k), exact: exact[k] });
      if (prefixes.length >= 50) break;
    }
    expect(prefixes).toHaveLength(50);
    const valuesAfterAnError = prefixes.filter((x) => x.exact > 0 && x.exact < 0.5).length;
    expect(valuesAfterAnError).toBeGreaterThan(0);

    const before = server.metrics().requests;
    const outside: string[] = [];
    await Promise.all(
      prefixes.map(async (x, j) => {
        const prefix = prefixFromChunks(x.chunks);
        const r = await model.generate({
          prompt: renderPolicyPrompt(x.problem.question, prefix),
          n: M,
          maxTokens: 1000,
          temperature: 1,
          seed: j,
        });
        expect(r.samples).toHaveLength(M);
        const correct = r.samples.filter((s) => isSimSolutionCorrect(x.problem, prefix + s.text)).length;
        const q = correct / M;
        const se = Math.sqrt((x.exact * (1 - x.exact)) / M);
        if (Math.abs(q - x.exact) > 4 * se + 1e-12)
          outside.push(`prefix ${j}: estimate ${q}, exact ${x.exact}`);
      }),
    );
    expect(outside).toEqual([]);
    expect(server.metrics().requests - before).toBe(50);
  });
});
