/**
 * Rollouts used by linear vs binary (OmegaPRM) first-error search, and how often they agree, on
 * simulated solutions with ≥ 8 chunks. SIMULATED: the policy is the sim world (src/sim), not a
 * real model. Prints one JSON object.
 *
 *   npx tsx bench/label-search.ts [--solutions 400] [--rollouts 16]... [--world sim?step_error=0.1]...
 *
 * Defaults: worlds `sim` and `sim?step_error=0.2`, M = 16 and 32.
 *
 * Per world it reports, for the abs-q first error:
 * - linear: every prefix estimated (empty + one per chunk), what `--search linear` does;
 * - linearStopAtZero: prefixes in order until the first Q̂ = 0 (the cheapest exact linear scan
 *   when only the first error is wanted);
 * - binary: bisection with the same run seed (a probed prefix gets the same rollouts as in the
 *   linear run: agreement then measures only non-monotone Q̂) and with another seed
 *   (independent rollouts: agreement also includes Monte Carlo noise);
 * - binary + early stop (batches of 4, stop at the first correct rollout);
 * - the share of solutions whose linear first error is the true first wrong step.
 */
import type { Problem } from '../src/core/types.js';
import { binarySearchFirstError, estimateStepValues } from '../src/label/estimate.js';
import { absQLabels, firstNegative } from '../src/label/signals.js';
import { createPolicy } from '../src/models/policy.js';
import { PROMPT_READERS } from '../src/prompts/readers.js';
import { simProcessBenchRows } from '../src/sim/dataset.js';
import { createSimModel } from '../src/sim/model.js';
import { parseSimSpec } from '../src/sim/options.js';
import { parseSimQuestion, solveSimProblem } from '../src/sim/world.js';
import { checkSolution } from '../src/verify/check.js';

function flag(name: string, fallback: string): string[] {
  const out: string[] = [];
  for (let i = 2; i < process.argv.length; i++)
    if (process.argv[i] === `--${name}`) out.push(process.argv[i + 1]);
  return out.length ? out : [fallback];
}

const count = Number(flag('solutions', '400')[0]);
const rolloutCounts = process.argv.includes('--rollouts') ? flag('rollouts', '16').map(Number) : [16, 32];
const worlds = flag('world', 'sim').concat(process.argv.includes('--world') ? [] : ['sim?step_error=0.2']);

async function benchWorld(spec: string, M: number) {
  const model = createSimModel(spec, PROMPT_READERS);
  const policy = createPolicy(model);
  const { options } = parseSimSpec(spec);
  const rows = simProcessBenchRows({ count, errorShare: 0.5 }, options).filter((r) => r.steps.length >= 8);
  const t0 = performance.now();
  let linear = 0;
  let linearStop = 0;
  let binary = 0;
  let binaryEarly = 0;
  let agreeSameSeed = 0;
  let agreeOtherSeed = 0;
  let agreeEarly = 0;
  let withError = 0;
  let linearIsTrue = 0;
  let maxRatio = 0;
  for (const r of rows) {
    const problem: Problem = {
      id: r.id,
      question: r.problem,
      answer: String(solveSimProblem(parseSimQuestion(r.problem)!)),
      domain: 'math',
      source: 'sim',
    };
    const v = await estimateStepValues(policy, checkSolution, problem, r.steps, { rollouts: M, seed: 1 });
    const fe = firstNegative(absQLabels(v.q));
    if (fe >= 0) withError++;
    if (fe === r.label) linearIsTrue++;
    linear += v.rollouts;
    linearStop += (fe === -1 ? r.steps.length : fe + 1) * M;
    const same = await binarySearchFirstError(policy, checkSolution, problem, r.steps, {
      rollouts: M,
      seed: 1,
    });
    const other = await binarySearchFirstError(policy, checkSolution, problem, r.steps, {
      rollouts: M,
      seed: 2,
    });
    const early = await binarySearchFirstError(policy, checkSolution, problem, r.steps, {
      rollouts: M,
      seed: 1,
      earlyStop: { batchSize: 4 },
    });
    if (same.firstError === fe) agreeSameSeed++;
    if (other.firstError === fe) agreeOtherSeed++;
    if (early.firstError === fe) agreeEarly++;
    binary += same.rollouts;
    binaryEarly += early.rollouts;
    maxRatio = Math.max(maxRatio, same.rollouts / v.rollouts);
  }
  const n = rows.length;
  return {
    world: spec,
    simulated: true,
    solutions: n,
    meanChunks: rows.reduce((a, r) => a + r.steps.length, 0) / n,
    solutionsWithAbsQError: withError,
    rolloutsPerPrefix: M,
    rollouts: {
      linear,
      linearStopAtZero: linearStop,
      binary,
      binaryEarlyStop: binaryEarly,
      binaryOverLinear: binary / linear,
      binaryOverLinearStopAtZero: binary / linearStop,
      maxPerSolutionBinaryOverLinear: maxRatio,
    },
    agreementWithLinear: {
      binarySameSeed: agreeSameSeed / n,
      binaryOtherSeed: agreeOtherSeed / n,
      binaryEarlyStop: agreeEarly / n,
    },
    linearEqualsTrueFirstWrongStep: linearIsTrue / n,
    seconds: (performance.now() - t0) / 1000,
  };
}

const results = [];
for (const w of worlds) for (const M of rolloutCounts) results.push(await benchWorld(w, M));
process.stdout.write(`${JSON.stringify({ bench: 'label-search', simulated: true, results }, null, 2)}\n`);
