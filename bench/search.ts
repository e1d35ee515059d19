/**
 * Accuracy vs compute of every search strategy on the SIMULATED world (in process, offline).
 * Prints a JSON report (simulated: true) on stdout and writes bench/results/search.svg.
 *
 *   npx tsx bench/search.ts [problems=300] [step_error=0.1] [sensitivity=0.9] [specificity=0.9]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createJudge } from '../src/judge/create.js';
import { createPolicy } from '../src/models/policy.js';
import { createDefaultRegistry } from '../src/providers/default.js';
import { benchChart, benchSearch, DEFAULT_BENCH_SPECS } from '../src/search/bench.js';
import { simDatasetProblems } from '../src/sim/dataset.js';

const [count = 300, stepError = 0.1, sens = 0.9, spec = 0.9] = process.argv.slice(2).map(Number);
const providers = createDefaultRegistry();
const policySpec = `sim?step_error=${stepError}`;
const judgeSpec = `sim:generative?sensitivity=${sens}&specificity=${spec}`;
const policy = createPolicy(await providers.languageModel(policySpec));
const judge = await createJudge(judgeSpec, { providers });
const outcome = await createJudge('sim:orm', { providers });
const problems = simDatasetProblems(count, { seed: 1, stepError });
const report = await benchSearch({
  problems,
  specs: [...DEFAULT_BENCH_SPECS, { strategy: 'refine', budgets: [] }],
  deps: { policy, judge, outcome },
  policy: policySpec,
  judge: judgeSpec,
  onPoint: (p, i, n) =>
    process.stderr.write(
      `${i + 1}/${n} ${p.strategy}${p.budget ? ` ${p.knob}=${p.budget}` : ''}: ${(100 * p.accuracy).toFixed(1)}% at ${Math.round(p.costPerProblem.totalTokens)} tokens/problem\n`,
    ),
});
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/search.svg', import.meta.url), benchChart(report));
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
