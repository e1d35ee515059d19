import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCosts, emptyCost } from '../../src/core/cost.js';
import type { Problem } from '../../src/core/types.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { createJudge } from '../../src/judge/index.js';
import { createPolicy } from '../../src/models/policy.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { BAD_MARKER } from '../../src/prompts/refine.js';
import { runStrategy } from '../../src/search/registry.js';
import type { SearchResult } from '../../src/search/types.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { parseSimSpec } from '../../src/sim/options.js';
import { firstWrongStep, simChunksOf, simSuccessRate } from '../../src/sim/policy.js';
import { type SimServer, startSimServer } from '../../src/sim/server.js';
import { TINY_FIT } from '../../src/sim/tiny-fit.js';
import { parseSimQuestion } from '../../src/sim/world.js';
import { providers } from '../support/providers.js';

async function runAll(
  name: string,
  problems: readonly Problem[],
  config: Record<string, unknown>,
  deps: Parameters<typeof runStrategy>[3],
  concurrency = 1,
): Promise<SearchResult[]> {
  const limit = pLimit(concurrency);
  return Promise.all(problems.map((p) => limit(() => runStrategy(name, p, config, deps))));
}
const accuracy = (rs: SearchResult[]): number => rs.filter((r) => r.correct).length / rs.length;

describe('acceptance 1: 300 sim problems, 10% step-error policy, 0.9/0.9 judge (in process, the default sim: recurring misconceptions, difficulty-grown judge errors)', () => {
  const model = createSimModel('sim?step_error=0.1&sensitivity=0.9&specificity=0.9', PROMPT_READERS);
  const policy = createPolicy(model);
  const judge = createGenerativeJudge(model);
  // The control: the same judge code with P(Positive) = 0.9 whether the chunk is right or wrong
  // (sensitivity = 1 − specificity, constant rates): it rejects as often, but knows nothing.
  const blind = createGenerativeJudge(
    createSimModel('sim?step_error=0.1&sensitivity=0.1&specificity=0.9&judge_difficulty=0', PROMPT_READERS),
  );
  const problems = simDatasetProblems(300, { seed: 7, stepError: 0.1 });
  const checked = (rs: SearchResult[]): SearchResult[] => {
    for (const r of rs) {
      // Every result is graded by the answer it wrote, not taken on trust.
      const p = problems.find((q) => q.id === r.problemId)!;
      expect(r.correct).toBe(String(r.answer) === p.answer);
    }
    return rs;
  };

  it('every strategy runs, is graded by its own answer and pays for its judge', async () => {
    const acc: Record<string, number> = {};
    for (const [key, name, config] of [
      ['sample', 'sample', {}],
      ['chunk-reset', 'chunk-reset', {}],
      ['greedy-prm', 'greedy-prm', {}],
      ['bon1', 'best-of-n', { n: 1 }],
      ['bon4', 'best-of-n', { n: 4 }],
      ['bon16', 'best-of-n', { n: 16 }],
    ] as const) {
      const results = checked(await runAll(name, problems, config, { policy, judge }));
      acc[key] = accuracy(results);
      for (const r of results) {
        expect(r.cost.policy.calls).toBeGreaterThan(0);
        expect(r.cost.policy.completionTokens).toBeGreaterThan(0);
        // Plain sampling and best-of-1 (nothing to choose between) make no judge call, and say so.
        if (key === 'sample' || key === 'bon1') expect(r.cost.judge.calls).toBe(0);
        else expect(r.cost.judge.promptTokens).toBeGreaterThan(0);
      }
      // Best-of-N judges every chunk of every candidate: one judge call per candidate chunk.
      if (key === 'bon4' || key === 'bon16')
        for (const r of results)
          expect(r.cost.judge.calls).toBeGreaterThanOrEqual(r.trace.filter((t) => t.final).length);
    }
    // Printed so the report can quote the numbers (simulated world); how large the gains are is
    // the sim's knobs' doing (docs/sim.md), so no size is required here: the next test checks how
    // best-of-N chooses.
    console.log('simulated accuracies (300 problems):', JSON.stringify(acc));
  }, 240_000);

  it("best-of-16's pick follows its judge: an oracle judge picks a candidate with no wrong step whenever there is one, a judge that knows nothing picks at chance, and the gain over chance falls with the judge's sensitivity and specificity", async () => {
    const half = problems.slice(0, 150);
    const pickWith = async (spec: string) => {
      const model = createSimModel(spec, PROMPT_READERS);
      const deps = { policy: createPolicy(model), judge: createGenerativeJudge(model) };
      const results = checked(await runAll('best-of-n', half, { n: 16, checkCandidates: true }, deps, 4));
      const n = results.length;
      return {
        results,
        accuracy: accuracy(results),
        // What a perfect verifier reaches (some candidate is right) and a random pick's expected
        // accuracy (the share of right candidates), both from checking every candidate.
        oracle: results.filter((r) => r.stats.oracle === true).length / n,
        chance: results.reduce((a, r) => a + Number(r.stats.passing) / Number(r.stats.candidates), 0) / n,
      };
    };
    const perfect = await pickWith('sim?step_error=0.1&judge=perfect');
    // Min-aggregated verdicts of an oracle judge: a candidate scores 1 exactly when every step is
    // right. The pick is such a candidate whenever one exists, and then it is right; it misses a
    // right candidate only when every right one reached its answer through a wrong step (the sim
    // lets a later step or check repair a slip: all then score 0).
    for (const r of perfect.results) {
      const scores = r.trace.filter((t) => t.final).map((t) => t.score ?? 0);
      expect(r.stats.score, r.problemId).toBe(Math.max(...scores));
      if (r.stats.score === 1) expect(r.correct, r.problemId).toBe(true);
      if (r.stats.oracle === true && !r.correct) expect(Math.max(...scores), r.problemId).toBeLessThan(1);
    }
    expect(perfect.results.filter((r) => r.stats.score === 1).length).toBeGreaterThan(0);
    expect(perfect.accuracy).toBeLessThan(1);
    expect(perfect.chance).toBeLessThan(perfect.oracle);
    // Constant rates (P(Positive) = 0.9 on right and wrong chunks): the scores carry no
    // information, so the pick is as good as a random candidate (within 4 binomial SEs).
    const blindPick = await pickWith('sim?step_error=0.1&sensitivity=0.1&specificity=0.9&judge_difficulty=0');
    const se = Math.sqrt((blindPick.chance * (1 - blindPick.chance)) / half.length);
    expect(Math.abs(blindPick.accuracy - blindPick.chance)).toBeLessThanOrEqual(4 * se);
    // The gain over a random pick falls with the judge's rates: the oracle, the default 0.9/0.9
    // judge, the tiny judge's measured rates (sensitivity 0.56, specificity 0.65, errors growing
    // with difficulty; its sign is not required: with min aggregation over ~15 chunks almost every
    // candidate holds a false Negative, and the pick can fall below chance).
    const usual = await pickWith('sim?step_error=0.1&sensitivity=0.9&specificity=0.9');
    const j = TINY_FIT.judge;
    const fitted = await pickWith(
      `sim?step_error=0.1&misconception=${TINY_FIT.misconception}&recur=${TINY_FIT.recur}&sensitivity=${j.sensitivity}&specificity=${j.specificity}&format_failure=${j.formatFailure}&judge_difficulty=${j.judgeDifficulty}`,
    );
    const gain = (x: { accuracy: number; chance: number }) => x.accuracy - x.chance;
    expect(gain(perfect)).toBeGreaterThan(gain(usual));
    expect(gain(usual)).toBeGreaterThan(gain(fitted));
    expect(fitted.accuracy).toBeLessThanOrEqual(fitted.oracle);
    console.log(
      'simulated best-of-16 picks (150 problems; accuracy / chance / oracle):',
      JSON.stringify(
        Object.fromEntries(
          Object.entries({ perfect, usual, blind: blindPick, fitted }).map(([k, v]) => [
            k,
            [v.accuracy, v.chance, v.oracle].map((x) => Math.round(x * 1000) / 1000),
          ]),
        ),
      ),
    );
  }, 240_000);

  it('every judged strategy uses its judge: with a judge that knows nothing (same rejection rate) it does worse', async () => {
    const half = problems.slice(0, 150);
    const gaps: Record<string, number> = {};
    for (const [name, config] of [
      ['chunk-reset', {}],
      ['greedy-prm', {}],
      ['best-of-n', { n: 16 }],
      ['beam', { n: 16 }],
      ['weighted-vote', { n: 16 }],
    ] as const) {
      const informed = accuracy(checked(await runAll(name, half, config, { policy, judge }, 4)));
      const uninformed = accuracy(checked(await runAll(name, half, config, { policy, judge: blind }, 4)));
      gaps[name] = informed - uninformed;
      // A direction, not a size (the size is the sim's knobs' doing): a strategy that ignored its
      // verdicts would sample the same texts with either judge, a gap of exactly 0.
      expect(gaps[name], name).toBeGreaterThan(0);
    }
    console.log(
      'simulated accuracy lost with a judge that knows nothing (150 problems):',
      JSON.stringify(gaps),
    );
  }, 240_000);
});

describe("where chunk-reset's gain comes from (the mechanism, not a size: docs/sim.md, Fitted to the tiny world)", () => {
  // A rejected chunk is worth regenerating only if the next attempt can be right (errors not
  // repeated from the same prefix) and only if the judge can tell (sensitivity). The same 200
  // problems and seeds throughout; one knob changes at a time.
  const problems = simDatasetProblems(200, { seed: 7, stepError: 0.1 });
  const gain = async (spec: string): Promise<number> => {
    const model = createSimModel(spec, PROMPT_READERS);
    const deps = { policy: createPolicy(model), judge: createGenerativeJudge(model) };
    // Against the exact accuracy of one sample in this world (the sim knows each problem's success
    // rate), not against one draw of it: a mechanism, not the luck of the baseline's seeds.
    const options = parseSimSpec(spec).options;
    const single = problems.reduce((a, p) => a + simSuccessRate(p.question, options), 0) / problems.length;
    return accuracy(await runAll('chunk-reset', problems, {}, deps, 4)) - single;
  };
  const judge = (j: typeof TINY_FIT.judge) =>
    `sensitivity=${j.sensitivity}&specificity=${j.specificity}&format_failure=${j.formatFailure}&judge_difficulty=${j.judgeDifficulty}`;
  const recurring = `misconception=${TINY_FIT.misconception}&recur=${TINY_FIT.recur}`;

  it('recurring errors and a weak judge each shrink the gain; the world fitted to the tiny networks keeps it within 10 points', async () => {
    const independent = await gain('sim?step_error=0.1&sensitivity=0.9&specificity=0.9&misconception=0');
    const repeated = await gain(`sim?step_error=0.1&sensitivity=0.9&specificity=0.9&${recurring}`);
    const weakJudge = await gain(`sim?step_error=0.1&misconception=0&${judge(TINY_FIT.judge)}`);
    const fitted = await gain(`sim?step_error=0.1&${recurring}&${judge(TINY_FIT.judge)}`);
    console.log('simulated chunk-reset gains (200 problems):', { independent, repeated, weakJudge, fitted });
    // Independent errors and a 0.9/0.9 judge: regenerating a rejected chunk mostly fixes it.
    expect(independent).toBeGreaterThan(0.15);
    // The same judge when a slip recurs from the same prefix (the tiny policy's 0.61): less. (Measured
    // against the exact single-sample accuracy: 0.25 → 0.18 here; against one draw of plain
    // sampling the drop swung between 0.02 and 0.17 with the baseline's seeds.)
    expect(repeated).toBeLessThan(independent - 0.05);
    // Independent errors, the tiny judge's rates: less.
    expect(weakJudge).toBeLessThan(independent - 0.08);
    // Both, as fitted to the tiny networks: at most 10 points (there chunk-reset was 2.0 to 7.7 points
    // below plain sampling with each honest judge, 4.3 with the committed judge at seed 0).
    expect(fitted).toBeLessThanOrEqual(0.1);
  }, 240_000);
});

describe('over HTTP against the sim server', () => {
  let server: SimServer;
  let proxy: {
    url: string;
    bodies: Array<{ path: string; body: Record<string, unknown> }>;
    close: () => Promise<void>;
  };

  beforeAll(async () => {
    server = await startSimServer({ readers: PROMPT_READERS, seed: 3 });
    proxy = await startRecordingProxy(server.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  it('acceptance 2: the cost a search reports equals the requests and tokens the server counted', async () => {
    const baseUrl = server.baseURL;
    const policy = createPolicy(
      await providers.languageModel('openai:sim?step_error=0.2', { noCache: true, settings: { baseUrl } }),
    );
    const judge = await createJudge('generative:openai:sim?sensitivity=0.9&specificity=0.9', {
      providers,
      noCache: true,
      settings: { baseUrl },
    });
    const outcome = await createJudge('orm:openai:sim', { providers, noCache: true, settings: { baseUrl } });
    const problems = simDatasetProblems(8, { seed: 11 });
    server.resetMetrics();
    const results: SearchResult[] = [];
    for (const name of ['chunk-reset', 'best-of-n', 'beam', 'greedy-prm', 'refine', 'majority'])
      results.push(...(await runAll(name, problems, { n: 4 }, { policy, judge, outcome }, 4)));
    const total = addCosts(emptyCost(), ...results.map((r) => r.cost));
    const m = server.metrics();
    expect(total.policy.calls + total.judge.calls).toBe(m.requests);
    expect(total.policy.promptTokens + total.judge.promptTokens).toBe(m.promptTokens);
    expect(total.policy.completionTokens + total.judge.completionTokens).toBe(m.completionTokens);
    const byRole = (r: keyof typeof m.byRole) =>
      m.byRole[r] ?? { requests: 0, promptTokens: 0, completionTokens: 0 };
    const policySide = ['policy', 'refine'] as const;
    expect(total.policy.calls).toBe(policySide.reduce((s, r) => s + byRole(r).requests, 0));
    expect(total.policy.completionTokens).toBe(
      policySide.reduce((s, r) => s + byRole(r).completionTokens, 0),
    );
    expect(total.judge.calls).toBe(byRole('judge').requests + byRole('orm').requests);
    expect(total.judge.promptTokens).toBe(byRole('judge').promptTokens + byRole('orm').promptTokens);
  });

  it('acceptance 3: with a perfect judge, chunk-reset solves ≥ 95% of problems whose success rate is ≥ 30%', async () => {
    const baseUrl = server.baseURL;
    // A 20% step-error policy, so the set spans easy and hard problems.
    const policy = createPolicy(
      await providers.languageModel('openai:sim?step_error=0.2', { noCache: true, settings: { baseUrl } }),
    );
    const judge = await createJudge('generative:openai:sim?judge=perfect', {
      providers,
      noCache: true,
      settings: { baseUrl },
    });
    const all = simDatasetProblems(150, { seed: 5, stepError: 0.2 });
    const problems = all.filter((p) => (p.meta?.successRate as number) >= 0.3);
    expect(problems.length).toBeGreaterThan(60);
    expect(problems.length).toBeLessThan(all.length);
    const rs = await runAll('chunk-reset', problems, {}, { policy, judge }, 8);
    const solved = accuracy(rs);
    console.log(
      `perfect judge: chunk-reset solved ${(solved * 100).toFixed(1)}% of ${problems.length} sim problems`,
    );
    expect(solved).toBeGreaterThanOrEqual(0.95);
  });

  it('acceptance 4: the local-refinement request the server received marks [BAD] before the first negative chunk', async () => {
    const baseUrl = `${proxy.url}/v1`;
    const policy = createPolicy(
      await providers.languageModel('openai:sim?step_error=0.3', { noCache: true, settings: { baseUrl } }),
    );
    const judge = await createJudge('generative:openai:sim?judge=perfect', {
      providers,
      noCache: true,
      settings: { baseUrl },
    });
    const outcome = await createJudge('orm:openai:sim?orm_sensitivity=1&orm_specificity=1', {
      providers,
      noCache: true,
      settings: { baseUrl },
    });
    const problems = simDatasetProblems(40, { seed: 9 });
    let checked = 0;
    for (const p of problems) {
      proxy.bodies.length = 0;
      const r = await runStrategy('refine', p, {}, { policy, judge, outcome });
      if (r.stats.firstError === undefined || (r.stats.firstError as number) < 0) continue;
      const local = proxy.bodies.filter(
        (b) => b.path === '/v1/chat/completions' && JSON.stringify(b.body.messages).includes(BAD_MARKER),
      );
      expect(local).toHaveLength(1);
      const messages = local[0].body.messages as Array<{ role: string; content: string }>;
      const draftNode = r.trace.find((t) => t.label === 'draft')!;
      const draftChunks = simChunksOf(draftNode.text);
      const truth = firstWrongStep(parseSimQuestion(p.question)!, draftChunks);
      expect(r.stats.firstError).toBe(truth);
      const user = messages.find((m) => m.role === 'user')!.content;
      const draftPart = user.slice(user.indexOf('Draft:\n') + 'Draft:\n'.length);
      const marked = draftPart.split('\n\n');
      expect(marked).toHaveLength(draftChunks.length);
      marked.forEach((c, i) => {
        expect(c).toBe(i === truth ? `${BAD_MARKER} ${draftChunks[i]}` : draftChunks[i]);
      });
      if (truth > 0) {
        expect(messages[messages.length - 1]).toEqual({
          role: 'assistant',
          content: `${draftChunks.slice(0, truth).join('\n\n')}\n\n`,
        });
        expect(local[0].body.continue_final_message).toBe(true);
      }
      checked++;
      if (checked >= 3) break;
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });
});

/** A pass-through HTTP proxy that records every JSON request body it forwards. */
async function startRecordingProxy(target: string): Promise<{
  url: string;
  bodies: Array<{ path: string; body: Record<string, unknown> }>;
  close: () => Promise<void>;
}> {
  const bodies: Array<{ path: string; body: Record<string, unknown> }> = [];
  const t = new URL(target);
  const srv = createServer((req: IncomingMessage, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      if (raw.length > 0) {
        try {
          bodies.push({ path: req.url ?? '', body: JSON.parse(raw.toString('utf8')) });
        } catch {
          // not JSON: forwarded unrecorded
        }
      }
      const fwd = httpRequest(
        {
          host: t.hostname,
          port: t.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: t.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      fwd.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      fwd.end(raw);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}
