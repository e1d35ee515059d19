/**
 * Paragraph vs self-segmentation (`--segmentation tags`, METHODS §1) on the simulated world:
 * chunks per solution, requests per labeled solution and judge calls per chunk-reset solution,
 * with the accuracy of each mode beside them. SIMULATED: the policy and the judge are the sim
 * world (src/sim), whose tags mode writes the same chain of steps as its paragraph mode but
 * groups a restatement, the operation it sets up and that operation's check into one chunk, so
 * the accuracies should agree within sampling noise. Prints one JSON object.
 *
 *   npx tsx bench/segmentation.ts [--problems 60] [--n 4] [--rollouts 8] [--world sim] [--seed 0]
 */
// The composition root: registers the model providers (sim, openai, gguf) that createModel looks up.
import '../src/providers/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Segmentation } from '../src/core/segment.js';
import { createJudge } from '../src/judge/create.js';
import { readLabelInput } from '../src/label/input.js';
import { labelSolution } from '../src/label/label.js';
import { createPolicy } from '../src/models/policy.js';
import { sampleProblem } from '../src/sample/sample.js';
import { runStrategy } from '../src/search/registry.js';
import { simDatasetProblems } from '../src/sim/dataset.js';
import { createSimModel } from '../src/sim/model.js';
import { parseSimSpec } from '../src/sim/options.js';
import { checkSolution } from '../src/verify/check.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const problemsCount = Number(flag('problems', '60'));
const n = Number(flag('n', '4'));
const rollouts = Number(flag('rollouts', '8'));
const world = flag('world', 'sim');
const seed = Number(flag('seed', '0'));

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

async function benchMode(segmentation: Segmentation, dir: string) {
  const model = createSimModel(world);
  const policy = createPolicy(model, { segmentation });
  const problems = simDatasetProblems(problemsCount, { ...parseSimSpec(world).options, seed });

  // 1. Sample n solutions per problem, as `stepwise sample` does.
  const records = [];
  for (const p of problems) records.push(await sampleProblem(p, { policy, n, seed }));
  const samples = records.flatMap((r) => r.samples);

  // 2. Label every sample from the sample file, as `stepwise label` does (abs-q, M rollouts per prefix).
  const file = join(dir, `${segmentation}.jsonl`);
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const byId = new Map(problems.map((p) => [p.id, p]));
  const solutions = readLabelInput(file, { problems: byId, segmentation });
  const requests: number[] = [];
  const rolloutsDrawn: number[] = [];
  for (const s of solutions) {
    const r = await labelSolution(policy, checkSolution, s, {
      signals: ['abs-q'],
      rollouts,
      seed,
      segmentation,
    });
    requests.push(r.requests);
    rolloutsDrawn.push(r.record.cost.rollouts);
  }

  // 3. Chunk-reset search with the simulated generative judge.
  const judge = await createJudge('generative:sim', { model });
  const judgeCalls: number[] = [];
  const policyCalls: number[] = [];
  const searchChunks: number[] = [];
  let searchCorrect = 0;
  for (const p of problems) {
    const r = await runStrategy('chunk-reset', p, { segmentation, seed }, { policy, judge });
    judgeCalls.push(r.cost.judge.calls);
    policyCalls.push(r.cost.policy.calls);
    searchChunks.push(r.chunks.length);
    if (r.correct) searchCorrect++;
  }
  return {
    chunksPerSolution: round(mean(samples.map((s) => s.chunks.length))),
    sampleAccuracy: round(samples.filter((s) => s.correct).length / samples.length),
    brokenTags: samples.filter((s) => s.segmentation === 'paragraph').length,
    label: {
      solutions: solutions.length,
      requestsPerLabeledSolution: round(mean(requests)),
      rolloutsPerLabeledSolution: round(mean(rolloutsDrawn)),
    },
    chunkReset: {
      problems: problems.length,
      accuracy: round(searchCorrect / problems.length),
      chunksPerSolution: round(mean(searchChunks)),
      judgeCallsPerSolution: round(mean(judgeCalls)),
      policyCallsPerSolution: round(mean(policyCalls)),
    },
  };
}

const t0 = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'stepwise-bench-seg-'));
try {
  const paragraph = await benchMode('paragraph', dir);
  const tags = await benchMode('tags', dir);
  const ratio = (a: number, b: number) => round(b === 0 ? 0 : a / b);
  const report = {
    simulated: true,
    note: 'SIMULATED world (src/sim): these numbers describe the simulator, not a real model.',
    world,
    problems: problemsCount,
    samplesPerProblem: n,
    rolloutsPerPrefix: rollouts,
    seed,
    paragraph,
    tags,
    tagsOverParagraph: {
      chunksPerSolution: ratio(tags.chunksPerSolution, paragraph.chunksPerSolution),
      requestsPerLabeledSolution: ratio(
        tags.label.requestsPerLabeledSolution,
        paragraph.label.requestsPerLabeledSolution,
      ),
      judgeCallsPerChunkResetSolution: ratio(
        tags.chunkReset.judgeCallsPerSolution,
        paragraph.chunkReset.judgeCallsPerSolution,
      ),
    },
    seconds: round((performance.now() - t0) / 1000, 1),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
