/**
 * Paragraph vs self-segmentation (`--segmentation tags`, METHODS §1): chunks per solution,
 * requests per labeled solution and judge calls per chunk-reset solution, with the accuracy of
 * each mode beside them (95% Wilson intervals, and the tags − paragraph difference paired by
 * problem with a normal 95% interval). Prints one JSON object.
 *
 * Worlds:
 * - `--world sim` (default, or any sim spec): SIMULATED. The policy and the judge are the sim
 *   world (src/sim), whose tags mode writes the same chain of steps as its paragraph mode but
 *   groups a restatement, the operation it sets up and that operation's check into one chunk.
 * - `--world tiny`: the tiny real networks trained by this project (docs/tiny.md; NOT a large
 *   language model): models/tiny/policy.gguf, which follows either prompt (one operation per
 *   paragraph, or `<chunk>`s grouping a run of one family of operations), and the tiny
 *   generative judge models/tiny/judge.gguf, both in process (node-llama-cpp), on the held-out
 *   problems of models/tiny/heldout.jsonl, with the settings of python/tiny/search.sh
 *   (temperature 1, 96 tokens per solution, 48 per step, 5 attempts).
 *
 *   npx tsx bench/segmentation.ts [--world sim|tiny] [--problems 60] [--n 4] [--rollouts 8] [--seed 0] [--tiny-dir models/tiny]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { wilson95 } from '../src/cli/commands/demo.js';
import type { LanguageModel } from '../src/core/model.js';
import type { Segmentation } from '../src/core/segment.js';
import type { Problem } from '../src/core/types.js';
import { createJudge } from '../src/judge/create.js';
import type { StepJudge } from '../src/judge/types.js';
import { readLabelInput } from '../src/label/input.js';
import { labelSolution } from '../src/label/label.js';
import { createPolicy } from '../src/models/policy.js';
import { PROMPT_READERS } from '../src/prompts/readers.js';
import { createDefaultRegistry } from '../src/providers/default.js';
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

const providers = createDefaultRegistry();
const problemsCount = Number(flag('problems', '60'));
const n = Number(flag('n', '4'));
const rollouts = Number(flag('rollouts', '8'));
const world = flag('world', 'sim');
const seed = Number(flag('seed', '0'));
const tinyDir = flag('tiny-dir', new URL('../models/tiny', import.meta.url).pathname);
const tiny = world === 'tiny';

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

/** 95% Wilson interval of k successes in n (demo's, rounded). */
function wilson(k: number, total: number): [number, number] {
  const [lo, hi] = wilson95(k, total);
  return [round(lo), round(hi)];
}

/** Mean of paired per-problem differences with a normal 95% interval. */
function pairedDifference(a: readonly number[], b: readonly number[]) {
  const d = a.map((x, i) => x - b[i]);
  const m = mean(d);
  const sd = Math.sqrt(d.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, d.length - 1));
  const h = (1.96 * sd) / Math.sqrt(Math.max(1, d.length));
  return { mean: round(m), interval: [round(m - h), round(m + h)] };
}

/** The world's models, problems and generation settings. */
interface World {
  policyModel: LanguageModel;
  judge: StepJudge;
  problems: Problem[];
  /** Generation settings (tiny: those of python/tiny/search.sh; sim: the defaults). */
  generation: { temperature?: number; maxTokens?: number; maxStepTokens?: number };
  close(): Promise<void>;
}

async function openWorld(): Promise<World> {
  if (!tiny) {
    const model = createSimModel(world, PROMPT_READERS);
    return {
      policyModel: model,
      judge: await createJudge('generative:sim', { providers, model }),
      problems: simDatasetProblems(problemsCount, { ...parseSimSpec(world).options, seed }),
      generation: {},
      close: async () => {},
    };
  }
  // No call cache: every call is counted, and a reply of an earlier model file is never reused.
  const policyModel = await providers.languageModel(`gguf:${join(tinyDir, 'policy.gguf')}`, {
    noCache: true,
  });
  const problems = readFileSync(join(tinyDir, 'heldout.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, problemsCount)
    .map((l) => {
      const r = JSON.parse(l) as { id: string; question: string; answer: string };
      return { id: r.id, question: r.question, answer: r.answer, domain: 'math' as const, source: 'tiny' };
    });
  const judge = await createJudge(`generative:gguf:${join(tinyDir, 'judge.gguf')}`, {
    providers,
    noCache: true,
  });
  return {
    policyModel,
    judge,
    problems,
    generation: { temperature: 1, maxTokens: 96, maxStepTokens: 48 },
    close: async () => {
      await policyModel.close?.();
      await judge.close?.();
    },
  };
}

async function benchMode(segmentation: Segmentation, w: World, dir: string) {
  const policy = createPolicy(w.policyModel, { segmentation });
  const { problems } = w;
  const g = w.generation;

  // 1. Sample n solutions per problem, as `stepwise sample` does.
  const records = [];
  for (const p of problems)
    records.push(
      await sampleProblem(p, { policy, n, seed, temperature: g.temperature, maxTokens: g.maxTokens }),
    );
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
      temperature: g.temperature,
      maxTokens: g.maxTokens,
    });
    requests.push(r.requests);
    rolloutsDrawn.push(r.record.cost.rollouts);
  }

  // 3. Chunk-reset search with the world's generative judge.
  const judgeCalls: number[] = [];
  const policyCalls: number[] = [];
  const searchChunks: number[] = [];
  const searchCorrect: number[] = [];
  for (const p of problems) {
    const r = await runStrategy('chunk-reset', p, { segmentation, seed, ...g }, { policy, judge: w.judge });
    judgeCalls.push(r.cost.judge.calls);
    policyCalls.push(r.cost.policy.calls);
    searchChunks.push(r.chunks.length);
    searchCorrect.push(r.correct ? 1 : 0);
  }
  const sampleCorrect = samples.filter((s) => s.correct).length;
  const chunkResetCorrect = searchCorrect.reduce((a, b) => a + b, 0);
  return {
    report: {
      chunksPerSolution: round(mean(samples.map((s) => s.chunks.length))),
      sampleAccuracy: round(sampleCorrect / samples.length),
      sampleAccuracyInterval: wilson(sampleCorrect, samples.length),
      brokenTags: samples.filter((s) => s.segmentation === 'paragraph').length,
      label: {
        solutions: solutions.length,
        requestsPerLabeledSolution: round(mean(requests)),
        rolloutsPerLabeledSolution: round(mean(rolloutsDrawn)),
      },
      chunkReset: {
        problems: problems.length,
        accuracy: round(chunkResetCorrect / problems.length),
        accuracyInterval: wilson(chunkResetCorrect, problems.length),
        chunksPerSolution: round(mean(searchChunks)),
        judgeCallsPerSolution: round(mean(judgeCalls)),
        policyCallsPerSolution: round(mean(policyCalls)),
      },
    },
    // Per problem, for the paired differences.
    sampleCorrectByProblem: records.map((r) => mean(r.samples.map((s) => (s.correct ? 1 : 0)))),
    searchCorrect,
  };
}

const t0 = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'stepwise-bench-seg-'));
const w = await openWorld();
try {
  const p = await benchMode('paragraph', w, dir);
  const t = await benchMode('tags', w, dir);
  const paragraph = p.report;
  const tags = t.report;
  const ratio = (a: number, b: number) => round(b === 0 ? 0 : a / b);
  const report = {
    ...(tiny
      ? {
          world: 'tiny',
          simulated: false,
          note: 'TINY world: real tiny networks trained by this project (models/tiny, docs/tiny.md), run in process by node-llama-cpp; not a large language model.',
          problemsFrom: relative(process.cwd(), join(tinyDir, 'heldout.jsonl')),
        }
      : {
          simulated: true,
          note: 'SIMULATED world (src/sim): these numbers describe the simulator, not a real model.',
          world,
        }),
    problems: w.problems.length,
    samplesPerProblem: n,
    rolloutsPerPrefix: rollouts,
    seed,
    generation: w.generation,
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
    // Tags minus paragraph, paired by problem (same problems, same seed).
    accuracyDifference: {
      sample: pairedDifference(t.sampleCorrectByProblem, p.sampleCorrectByProblem),
      chunkReset: pairedDifference(t.searchCorrect, p.searchCorrect),
    },
    seconds: round((performance.now() - t0) / 1000, 1),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
}
