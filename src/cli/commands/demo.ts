import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { StepwiseError } from '../../core/errors.js';
import { wilson95 } from '../../core/interval.js';
import { type Segmentation, splitWritten } from '../../core/segment.js';
import type { Cost, Problem } from '../../core/types.js';
import type { ProcessBenchRecord } from '../../data/types.js';
import { chunkRowsPath, evaluateChunks, readLabeledSolutions } from '../../evaluate/chunks.js';
import { runProcessBench } from '../../evaluate/processbench.js';
import { createJudge } from '../../judge/create.js';
import type { StepJudge } from '../../judge/types.js';
import { labelJobSettings, resolveLabelConfig } from '../../label/config.js';
import { runLabelJob } from '../../label/job.js';
import type { SolutionToLabel } from '../../label/label.js';
import { createPolicy, type Policy } from '../../models/policy.js';
import { runSampleJob, summarizeSamples } from '../../sample/sample.js';
import {
  type BenchPoint,
  type BenchReport,
  type BenchSpec,
  benchChart,
  benchSearch,
  poolCostOf,
  withPairedDifferences,
} from '../../search/bench.js';
import type { SearchSummary } from '../../search/dataset.js';
import {
  formatPaired,
  outcomeString,
  outcomesOfFile,
  type PairedDifference,
  pairedDifference,
} from '../../search/paired.js';
import { SolutionPools } from '../../search/pool.js';
import { getStrategy } from '../../search/registry.js';
import { simDatasetProblems, simProblemRows, simProcessBenchRows } from '../../sim/dataset.js';
import { TINY_FIT } from '../../sim/tiny-fit.js';
import { type Db, openStore } from '../../store/db.js';
import { checkMathAnswer } from '../../verify/check.js';
import { runJobCommand } from '../job-harness.js';
import { jsonOption, seedOption } from '../option-groups.js';
import { intOption } from '../options.js';
import { providers } from '../providers.js';
import { recordedSearch } from '../search-setup.js';

/** search-and-learn's policy temperature: the demo's measured search numbers (docs/tiny.md) are at 0.8. */
const SEARCH_TEMPERATURE = 0.8;

/** Which world the demo runs in: the tiny real networks of models/tiny, or the simulator. */
export type DemoWorld = 'tiny' | 'sim';

/** Settings of the demo. Defaults keep it well under a minute on two cores. */
export interface DemoOptions {
  /** Default `tiny`: the real tiny models (docs/tiny.md); `sim`: the simulated world. */
  world?: DemoWorld;
  /** Folder of the tiny models and their problem files. Default: the package's models/tiny. */
  tinyDir?: string;
  /** Output folder (created). Default `./stepwise-demo`. */
  outDir?: string;
  /** Sim problems searched and sampled. Default 60. */
  problems?: number;
  /** Samples per problem in the sampling stage. Default 4. */
  samples?: number;
  /** Solutions labeled with rollouts. Default 8. */
  labelSolutions?: number;
  /** Rollouts per prefix (M) when labeling. Default 8 (StepWiser uses 16). */
  rollouts?: number;
  /** Rows of the sim ProcessBench-format set. Default 40. */
  processbenchRows?: number;
  /** N of best-of-N. Default 4. */
  bestOfN?: number;
  /** Simulated policy and judge error rates. */
  stepError?: number;
  sensitivity?: number;
  specificity?: number;
  seed?: number;
  /** Store the runs are recorded in. Default: the default store. */
  store?: Db;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
}

/** What the demo wrote and measured (also written as `report.json`). */
export interface DemoReport {
  kind: 'stepwise-demo';
  demo: true;
  /** `tiny`: real tiny networks trained by this project; `sim`: the simulator. */
  world: DemoWorld;
  simulated: boolean;
  notice: string;
  policy: string;
  judge: string;
  outDir: string;
  seconds: number;
  sample: { problems: number; samplesPerProblem: number; accuracy: number; passAtK: Record<string, number> };
  label: {
    solutions: number;
    chunks: number;
    rollouts: number;
    positiveShare: Record<string, number>;
    requests: number;
  };
  evalChunks: { signal: string; accuracy: number; balancedAccuracy: number; solutions: number };
  processbench: { rows: number; errorAcc: number; correctAcc: number; f1: number };
  search: Array<{
    strategy: string;
    label: string;
    accuracy: number;
    tokensPerProblem: number;
    policyCallsPerProblem: number;
    judgeCallsPerProblem: number;
    /** 95% Wilson interval of the accuracy over the problems. */
    ci95: [number, number];
    /** Against plain sampling on the same problems (per-problem differences; not on plain sampling itself). */
    paired?: PairedDifference;
  }>;
  /** Accuracy vs compute: `bench search` points, several budgets per strategy (also in accuracy-vs-compute.json). */
  accuracyVsCompute: Array<{
    strategy: string;
    knob?: string;
    budget?: number;
    accuracy: number;
    tokensPerProblem: number;
    paired?: PairedDifference;
    /** 95% Wilson interval of the accuracy over the problems. */
    ci95: [number, number];
  }>;
  files: Record<string, string>;
  runs: string[];
}

const TINY_NOTICE =
  'TINY world: real tiny networks trained on synthetic arithmetic by this project — not results of a large language model. The policy and judge are llama-architecture networks of about 0.2M parameters (models/tiny, docs/tiny.md) run by llama.cpp in process; every problem has exact step truth.';

const NOTICE =
  'SIMULATED world: the policy, the judge and the problems come from the stepwise simulator (src/sim). These numbers show the pipeline working; they are not results of any real model.';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const tokens = (c: Cost): number =>
  c.policy.promptTokens + c.policy.completionTokens + c.judge.promptTokens + c.judge.completionTokens;

/** models/tiny of the package (dist/cli/commands → package root, as src/cli/commands in tests). */
export function defaultTinyDir(): string {
  return fileURLToPath(new URL('../../../models/tiny/', import.meta.url));
}

/**
 * The demo's budget sweep: plain sampling (one point), majority vote without a judge, best-of-N
 * and chunk-reset at several budgets each (`n` is the demo's best-of-N).
 */
export function demoBenchSpecs(n: number): BenchSpec[] {
  const up = (xs: number[]) => [...new Set(xs)].filter((x) => x >= 1).sort((a, b) => a - b);
  return [
    { strategy: 'sample', budgets: [] },
    { strategy: 'majority', budgets: up([2, 4, n, 2 * n]) },
    { strategy: 'best-of-n', budgets: up([1, 2, 4, n]) },
    { strategy: 'chunk-reset', budgets: [1, 2, 5] },
  ];
}

export { wilson95 } from '../../core/interval.js';

function readJsonl(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) throw new StepwiseError(`demo: tiny world file missing: ${path}`, { exitCode: 2 });
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The tiny world's held-out problems (python/tiny/task.py, split heldout). */
function tinyProblems(
  dir: string,
  count: number,
): { problems: Problem[]; rows: Array<Record<string, unknown>> } {
  const rows = readJsonl(join(dir, 'heldout.jsonl')).slice(0, count);
  const problems = rows.map(
    (r): Problem => ({
      id: String(r.id),
      question: String(r.question),
      answer: String(r.answer),
      domain: 'math',
      source: 'tiny',
      meta: { steps: r.steps },
    }),
  );
  return { problems, rows };
}

/**
 * The whole pipeline, offline, on the tiny real models (default) or the simulated world: sample solutions, label a few with
 * rollouts, evaluate the judge (chunk level and a sim ProcessBench-format set), run chunk-reset
 * and best-of-N against plain sampling, write every output into `outDir` and record the runs.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  const t0 = Date.now();
  const log = options.log ?? (() => {});
  const outDir = resolve(options.outDir ?? 'stepwise-demo');
  mkdirSync(outDir, { recursive: true });
  const seed = options.seed ?? 0;
  const world: DemoWorld = options.world ?? 'tiny';
  const simulated = world === 'sim';
  const notice = simulated ? NOTICE : TINY_NOTICE;
  const tinyDir = options.tinyDir ?? defaultTinyDir();
  const stepError = options.stepError ?? 0.1;
  // The simulated world's search knobs are fitted to the tiny networks' measured statistics
  // (src/sim/tiny-fit.ts): errors that recur from the same prefix, the honest judge's rates.
  const sens = options.sensitivity ?? TINY_FIT.judge.sensitivity;
  const spec = options.specificity ?? TINY_FIT.judge.specificity;
  const recurring = { misconception: TINY_FIT.misconception, recur: TINY_FIT.recur };
  const policySpec = simulated
    ? `sim?step_error=${stepError}&misconception=${recurring.misconception}&recur=${recurring.recur}`
    : `gguf:${join(tinyDir, 'policy.gguf')}`;
  const judgeSpec = simulated
    ? `sim:generative?sensitivity=${sens}&specificity=${spec}&format_failure=${TINY_FIT.judge.formatFailure}` +
      `&judge_difficulty=${TINY_FIT.judge.judgeDifficulty}`
    : `generative:gguf:${join(tinyDir, 'judge.gguf')}`;
  const store = options.store ?? openStore();
  const file = (name: string): string => join(outDir, name);
  const files: Record<string, string> = {};
  const runs: string[] = [];
  const count = options.problems ?? 60;
  /** One step of the demo, recorded by the job harness (the one owner of run records); it prints nothing. */
  const step = <R>(
    command: string,
    record: Record<string, unknown>,
    out: string,
    run: () => Promise<R>,
    counts: (result: R) => Record<string, number>,
  ): Promise<R> =>
    runJobCommand({
      command,
      db: store,
      record,
      out,
      quiet: true,
      run: async (job) => {
        runs.push(job.runId);
        return run();
      },
      counts,
    });
  let close = async (): Promise<void> => {};
  return runJobCommand({
    command: 'demo',
    db: store,
    record: {
      world,
      simulated,
      policy: policySpec,
      judge: judgeSpec,
      ...options,
      store: undefined,
      log: undefined,
    },
    out: file('report.json'),
    quiet: true,
    counts: (report) => ({ problems: count, seconds: Math.round(report.seconds) }),
    cleanup: () => close(),
    run: async (job) => {
      runs.push(job.runId);
      // The tiny policy writes its own `<chunk>`s (docs/tiny.md); the simulated demo keeps paragraphs.
      const segmentation: Segmentation = simulated ? 'paragraph' : 'tags';
      const model = await providers.languageModel(policySpec);
      close = async () => void (await model.close?.());
      const policy: Policy = createPolicy(model, { segmentation });
      const judge: StepJudge = await createJudge(judgeSpec, { providers });
      close = async () => {
        await model.close?.();
        await judge.close?.();
      };
      // Problems (written so the same run can be repeated with `stepwise sample --dataset jsonl`).
      const tiny = simulated ? undefined : tinyProblems(tinyDir, count);
      const problems: Problem[] = tiny ? tiny.problems : simDatasetProblems(count, { seed, stepError });
      const problemRows = tiny ? tiny.rows : simProblemRows(count, { seed, stepError });
      writeFileSync(file('problems.jsonl'), problemRows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      files.problems = 'problems.jsonl';

      // 1. Sample.
      log(`[1/5] sampling ${options.samples ?? 4} solutions for each of ${count} ${world} problems`);
      const sampled = await step(
        'sample',
        { world, simulated, policy: policySpec, n: options.samples ?? 4, segmentation },
        file('samples.jsonl'),
        () =>
          runSampleJob({
            problems,
            policy,
            n: options.samples ?? 4,
            out: file('samples.jsonl'),
            maxTokens: 2048,
            temperature: 1,
            seed,
            fresh: true,
          }),
        (rows) => {
          const { problems, samples } = summarizeSamples(rows);
          return { problems, samples };
        },
      );
      const sampleSummary = summarizeSamples(sampled);
      files.samples = 'samples.jsonl';

      // 2. Label a few solutions with rollouts (small M).
      const labelCount = Math.min(options.labelSolutions ?? 8, sampled.length);
      const rollouts = options.rollouts ?? 8;
      log(`[2/5] labeling ${labelCount} solutions with ${rollouts} rollouts per prefix`);
      const byId = new Map(problems.map((p) => [p.id, p]));
      const toLabel: SolutionToLabel[] = sampled.slice(0, labelCount).map((r) => {
        const s = r.samples[0];
        // Under tags, prefixes are the policy's own text cut right after a `</chunk>`.
        const split = segmentation === 'tags' ? splitWritten(s.text, 'tags') : undefined;
        return {
          id: `${r.id}#0`,
          problem: byId.get(r.id)!,
          chunks: s.chunks.map((c) => c.text),
          correct: s.correct,
          segmentation: s.segmentation ?? segmentation,
          ...(split?.method === 'tags' ? { written: { text: s.text, ends: split.ends } } : {}),
        };
      });
      const labelConfig = resolveLabelConfig(
        { rollouts, signals: ['abs-q', 'rel-ratio', 'rel-effective'], seed },
        { segmentation },
      );
      const labelRecord = { policy: policySpec };
      const labelSummary = await step(
        'label',
        {
          world,
          simulated,
          ...labelRecord,
          ...labelConfig,
          solutions: labelCount,
          job: labelJobSettings(labelConfig, labelRecord),
        },
        file('labels.jsonl'),
        () =>
          runLabelJob({
            solutions: toLabel,
            policy,
            checker: (p, t) => checkMathAnswer(p.answer, t),
            out: file('labels.jsonl'),
            config: labelConfig,
            record: labelRecord,
            fresh: true,
          }),
        (l) => ({ solutions: l.solutions, chunks: l.chunks }),
      );
      files.labels = 'labels.jsonl';

      // 3. Evaluate the judge: chunk level against the rollout labels, and first errors on a sim ProcessBench-format set.
      log(`[3/5] evaluating the judge: chunk agreement with the labels, ${world} ProcessBench-format set`);
      const chunkReport = await step(
        'eval chunks',
        { world, simulated, judge: judgeSpec, signal: 'abs-q' },
        file('eval-chunks.json'),
        async () => {
          const r = await evaluateChunks({
            judge,
            solutions: readLabeledSolutions(file('labels.jsonl'), 'abs-q'),
            signal: 'abs-q',
            rowsPath: chunkRowsPath(file('eval-chunks.json')),
          });
          writeFileSync(file('eval-chunks.json'), `${JSON.stringify(r, null, 2)}\n`);
          return r;
        },
        (r) => ({ solutions: r.solutions }),
      );
      files.evalChunks = 'eval-chunks.json';
      files.evalChunkRows = basename(chunkRowsPath(file('eval-chunks.json')));

      // Tiny world: the policy's own samples with their exact first errors (python/tiny/truth.py).
      const pbRows = simulated
        ? simProcessBenchRows(
            { count: options.processbenchRows ?? 40, errorShare: 0.5 },
            { seed, stepError, ...recurring },
          )
        : (readJsonl(join(tinyDir, 'processbench.jsonl')).slice(
            0,
            options.processbenchRows ?? 40,
          ) as unknown as Array<Omit<ProcessBenchRecord, 'subset'>>);
      const pbFile = `processbench-${world}.json`;
      writeFileSync(file(pbFile), `${JSON.stringify(pbRows, null, 2)}\n`);
      files.processbenchSet = pbFile;
      const samples: ProcessBenchRecord[] = pbRows.map((r) => ({ ...r, subset: world }));
      const pb = await step(
        'eval processbench',
        { world, simulated, judge: judgeSpec, path: file(pbFile) },
        file('processbench-report.json'),
        async () => {
          const r = await runProcessBench({
            judge,
            samples,
            predictionsPath: file('processbench-predictions.jsonl'),
            fresh: true,
            seed,
            segmentation,
          });
          writeFileSync(file('processbench-report.json'), `${JSON.stringify(r, null, 2)}\n`);
          return r;
        },
        (r) => ({ samples: r.samples }),
      );
      const pbSim = pb.subsets[world] ?? { error_acc: null, correct_acc: null, f1: null, n: 0 };
      files.processbenchPredictions = 'processbench-predictions.jsonl';
      files.processbenchReport = 'processbench-report.json';

      // 4. Search: plain sampling vs best-of-N vs chunk-reset, same problems, same seed. Uncached
      // models, as `bench search` has by default: a search answered from the cache (an earlier
      // demo in the same store) would cost nothing on the accuracy-vs-compute curve.
      const n = options.bestOfN ?? 4;
      const runsOf: Array<{ strategy: string; label: string; config: Record<string, unknown> }> = [
        { strategy: 'sample', label: 'plain sampling (1 sample)', config: {} },
        { strategy: 'best-of-n', label: `best-of-${n} (min step score)`, config: { n } },
        {
          strategy: 'chunk-reset',
          label: 'chunk-reset (≤ 5 attempts per chunk)',
          config: { maxAttempts: 5 },
        },
      ];
      log(`[4/5] search on ${count} problems: ${runsOf.map((r) => r.strategy).join(', ')}`);
      const summaries: Array<{
        label: string;
        summary: SearchSummary;
        config: Record<string, unknown>;
        outcomes: Map<string, boolean>;
      }> = [];
      const searchModel = simulated ? model : await providers.languageModel(policySpec, { noCache: true });
      const searchJudge = simulated ? judge : await createJudge(judgeSpec, { providers, noCache: true });
      // One pool of whole solutions per problem for plain sampling, best-of-N and majority, here and
      // in the sweep below: plain sampling is its first sample, best-of-N its first N (paired by design).
      const searchDeps = {
        policy: simulated ? policy : createPolicy(searchModel, { segmentation }),
        judge: searchJudge,
        pools: new SolutionPools(),
      };
      let bench: BenchReport;
      try {
        for (const r of runsOf) {
          const out = file(`search-${r.strategy}.jsonl`);
          const { summary, runId } = await recordedSearch(
            store,
            {
              problems,
              strategy: r.strategy,
              config: { seed, segmentation, temperature: SEARCH_TEMPERATURE, ...r.config },
              deps: searchDeps,
              out,
              fresh: true,
            },
            { world, simulated, policy: policySpec, judge: judgeSpec, dataset: world },
          );
          runs.push(runId);
          summaries.push({ label: r.label, summary, config: r.config, outcomes: outcomesOfFile(out) });
          files[`search ${r.strategy}`] = `search-${r.strategy}.jsonl`;
        }

        // 5. Accuracy vs compute: `bench search` over several budgets per strategy (same problems,
        // seed and models), so each strategy is a curve, not one point. The three searches above
        // are points of that sweep already (same config): they are taken, not searched again.
        const specs = demoBenchSpecs(n);
        const ids = problems.map((p) => p.id);
        const searched: BenchPoint[] = summaries.map(({ summary, config, outcomes }) => {
          const knob = getStrategy(summary.strategy).budget;
          const budget = knob ? (config[knob] as number | undefined) : undefined;
          return {
            strategy: summary.strategy,
            ...(knob && budget !== undefined ? { knob, budget } : {}),
            accuracy: summary.accuracy,
            correct: summary.correct,
            checked: summary.checked,
            costPerProblem: summary.costPerProblem,
            outcomes: outcomeString(ids, outcomes),
          };
        });
        const has = (strategy: string, budget?: number) =>
          searched.some((p) => p.strategy === strategy && p.budget === budget);
        // A budget-free spec (plain sampling) is one point; a budgeted one, a point per budget.
        const rest: BenchSpec[] = [];
        for (const sp of specs) {
          if (sp.budgets.length === 0) {
            if (!has(sp.strategy)) rest.push(sp);
            continue;
          }
          const budgets = sp.budgets.filter((b) => !has(sp.strategy, b));
          if (budgets.length > 0) rest.push({ strategy: sp.strategy, budgets });
        }
        const pointCount = specs.reduce((k, sp) => k + Math.max(1, sp.budgets.length), 0);
        log(
          `[5/5] accuracy vs compute: ${pointCount} points (${specs.map((sp) => (sp.budgets.length ? `${sp.strategy} ${sp.budgets.join(',')}` : sp.strategy)).join('; ')}), ${pointCount - searched.length} of them searched now, then the report`,
        );
        bench = await step(
          'bench search',
          { world, simulated, policy: policySpec, judge: judgeSpec, dataset: world, specs },
          file('accuracy-vs-compute.json'),
          async (): Promise<BenchReport> => {
            const swept = await benchSearch({
              problems,
              specs: rest,
              config: { seed, segmentation, temperature: SEARCH_TEMPERATURE },
              deps: searchDeps,
              policy: policySpec,
              judge: judgeSpec,
              simulated,
              // Plain sampling was searched above: pairs are taken against that point below.
              baseline: false,
            });
            // Points in the sweep's order: strategy by strategy, budgets rising.
            const order = (p: BenchPoint) => {
              const i = specs.findIndex((sp) => sp.strategy === p.strategy);
              return i * 1e6 + (p.budget ?? 0);
            };
            const merged = [...searched, ...swept.points].sort((x, y) => order(x) - order(y));
            return {
              ...swept,
              points: withPairedDifferences(merged, ids),
              ...poolCostOf(merged),
              // The sweep's world says what its numbers are (the tiny world is not the simulator).
              note: notice,
              seconds: (Date.now() - t0) / 1000,
            };
          },
          (b) => ({ points: b.points.length, problems: count }),
        );
      } finally {
        if (!simulated) {
          await searchModel.close?.();
          await searchJudge.close?.();
        }
      }
      writeFileSync(file('accuracy-vs-compute.json'), `${JSON.stringify(bench, null, 2)}\n`);
      writeFileSync(file('accuracy-vs-compute.svg'), benchChart(bench));
      files.accuracyVsCompute = 'accuracy-vs-compute.json';
      files.chart = 'accuracy-vs-compute.svg';
      files.report = 'report.json';

      const baselineOutcomes = summaries.find((x) => x.summary.strategy === 'sample')?.outcomes;
      const report: DemoReport = {
        kind: 'stepwise-demo',
        demo: true,
        world,
        simulated,
        notice,
        policy: policySpec,
        judge: judgeSpec,
        outDir,
        seconds: (Date.now() - t0) / 1000,
        sample: {
          problems: sampleSummary.problems,
          samplesPerProblem: sampleSummary.samplesPerProblem,
          accuracy: sampleSummary.accuracy,
          passAtK: sampleSummary.passAtK,
        },
        label: {
          solutions: labelSummary.solutions,
          chunks: labelSummary.chunks,
          rollouts,
          positiveShare: Object.fromEntries(
            Object.entries(labelSummary.signals).map(([k, v]) => [k, v?.share ?? 0]),
          ),
          requests: labelSummary.requests,
        },
        evalChunks: {
          signal: 'abs-q',
          accuracy: num(chunkReport.accuracy),
          balancedAccuracy: num(chunkReport.balanced_accuracy),
          solutions: chunkReport.solutions,
        },
        processbench: {
          rows: pbRows.length,
          errorAcc: num(pbSim.error_acc),
          correctAcc: num(pbSim.correct_acc),
          f1: num(pbSim.f1),
        },
        search: summaries.map(({ label, summary, outcomes }) => ({
          strategy: summary.strategy,
          label,
          accuracy: summary.accuracy,
          tokensPerProblem: tokens(summary.cost) / Math.max(1, summary.problems),
          policyCallsPerProblem: summary.costPerProblem.policyCalls,
          judgeCallsPerProblem: summary.costPerProblem.judgeCalls,
          ci95: wilson95(summary.correct, summary.checked),
          ...(summary.strategy === 'sample' || !baselineOutcomes
            ? {}
            : { paired: pairedDifference(baselineOutcomes, outcomes) }),
        })),
        accuracyVsCompute: bench.points.map((p) => ({
          strategy: p.strategy,
          ...(p.knob ? { knob: p.knob, budget: p.budget } : {}),
          accuracy: p.accuracy,
          tokensPerProblem: p.costPerProblem.totalTokens,
          ...(p.paired ? { paired: p.paired } : {}),
          ci95: wilson95(p.correct, p.checked),
        })),
        files,
        runs,
      };
      writeFileSync(file('report.json'), `${JSON.stringify(report, null, 2)}\n`);
      return report;
    },
  });
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** One line per strategy: its budgets with accuracy and tokens per problem, cheapest first. */
function curveLines(points: DemoReport['accuracyVsCompute']): string[] {
  const by = new Map<string, DemoReport['accuracyVsCompute']>();
  for (const p of points) by.set(p.strategy, [...(by.get(p.strategy) ?? []), p]);
  const w = Math.max(0, ...[...by.keys()].map((k) => k.length));
  return [...by].map(
    ([name, ps]) =>
      `  ${name.padEnd(w)}  ${ps
        .map(
          (p) =>
            `${p.knob ? `${p.knob}=${p.budget} ` : ''}${pct(p.accuracy)} @ ${Math.round(p.tokensPerProblem)} tok`,
        )
        .join('  ')}`,
  );
}

/** The short text report the demo prints. */
export function formatDemoReport(r: DemoReport, cwd = process.cwd()): string {
  const dir = relative(cwd, r.outDir) || '.';
  const w = Math.max(...r.search.map((s) => s.label.length));
  const lines = [
    '================================================================',
    r.world === 'sim'
      ? ' stepwise demo — SIMULATED WORLD (not real model results)'
      : ' stepwise demo — TINY WORLD: real tiny networks trained on synthetic arithmetic by this project — not results of a large language model',
    '================================================================',
    r.notice,
    '',
    `policy ${r.policy}   judge ${r.judge}`,
    '',
    `sample   ${r.sample.problems} problems × ${r.sample.samplesPerProblem} samples: accuracy ${pct(r.sample.accuracy)}` +
      Object.entries(r.sample.passAtK)
        .map(([k, v]) => `, ${k} ${pct(v)}`)
        .join(''),
    `label    ${r.label.solutions} solutions, ${r.label.chunks} chunks, M = ${r.label.rollouts} rollouts per prefix; ` +
      `positive share ${Object.entries(r.label.positiveShare)
        .map(([k, v]) => `${k} ${pct(v)}`)
        .join(', ')}`,
    `judge    chunk level vs abs-q labels: accuracy ${pct(r.evalChunks.accuracy)}, balanced ${pct(r.evalChunks.balancedAccuracy)}`,
    `         ${r.world} ProcessBench-format set (${r.processbench.rows} rows): error_acc ${r.processbench.errorAcc.toFixed(1)}, ` +
      `correct_acc ${r.processbench.correctAcc.toFixed(1)}, F1 ${r.processbench.f1.toFixed(1)}`,
    '',
    `search   ${r.sample.problems} problems, paired by design: one pool of samples per problem (plain sampling is its first sample, best-of-N its first N; not the sample stage above), differences per problem:`,
    ...r.search.map(
      (s) =>
        `  ${s.label.padEnd(w)}  accuracy ${pct(s.accuracy).padStart(6)} [95% ${pct(s.ci95[0])}–${pct(s.ci95[1])}]   ${Math.round(
          s.tokensPerProblem,
        )
          .toString()
          .padStart(
            6,
          )} tokens/problem (policy + judge), ${s.policyCallsPerProblem.toFixed(1)} policy + ${s.judgeCallsPerProblem.toFixed(1)} judge calls` +
        (s.paired ? `\n  ${''.padEnd(w)}  ${formatPaired(s.paired)}` : ''),
    ),
    '',
    `accuracy vs compute (bench search, ${r.accuracyVsCompute.length} points; chart in accuracy-vs-compute.svg):`,
    ...curveLines(r.accuracyVsCompute),
    '',
    `outputs  ${dir}/ (report.json, samples.jsonl, labels.jsonl, eval-chunks.json, processbench-report.json, search-*.jsonl, accuracy-vs-compute.svg)`,
    `         runs recorded: ${r.runs.length} (see \`stepwise runs\`; browse them with \`stepwise serve --dir ${dir}\`)`,
    `took     ${r.seconds.toFixed(1)} s`,
    '',
    'The same on real models (an OpenAI-compatible server such as vLLM, SGLang, llama.cpp, Ollama):',
    '  stepwise sample --dataset gsm8k --policy openai:<model> --base-url http://127.0.0.1:8000/v1 --n 4 --limit 60 --out samples.jsonl',
    '  stepwise label  --input samples.jsonl --dataset gsm8k --policy openai:<model> --base-url http://127.0.0.1:8000/v1 --rollouts 16 --out labels.jsonl',
    '  stepwise eval chunks --judge generative:openai:<judge> --base-url http://127.0.0.1:8000/v1 --input labels.jsonl --signal abs-q',
    '  stepwise eval processbench --judge generative:openai:<judge> --base-url http://127.0.0.1:8000/v1 --out processbench-report.json',
    '  stepwise search --dataset gsm8k --strategy chunk-reset --policy openai:<model> --judge generative:openai:<judge> --base-url http://127.0.0.1:8000/v1 --limit 60 --out search.jsonl',
    '  stepwise bench search --dataset gsm8k --policy openai:<model> --judge generative:openai:<judge> --base-url http://127.0.0.1:8000/v1 --limit 60 --out bench.json',
    'or a local GGUF model: replace openai:<model> by gguf:/path/to/model.gguf (and drop --base-url).',
  ];
  return `${lines.join('\n')}\n`;
}

/** `stepwise demo`: the whole pipeline offline on the tiny real models (or `--sim`, the simulated world). */
export function register(program: Command): void {
  program
    .command('demo')
    .description(
      'Run the whole pipeline offline on the tiny real networks trained by this project (--sim: the SIMULATED world): sample, label, evaluate a judge, search',
    )
    .option('--sim', 'run on the simulated world instead of the tiny real models')
    .option('--out-dir <dir>', 'folder for the outputs (JSON/JSONL, SVG chart)', 'stepwise-demo')
    .option('--problems <n>', 'problems to sample and search', intOption('--problems', 1), 60)
    .addOption(seedOption('seed of the problems and of every sampled call', { min: 0, default: 0 }))
    .addOption(jsonOption('print the report as JSON instead of text'))
    .action(async (f: { outDir: string; problems: number; seed: number; json?: boolean; sim?: boolean }) => {
      const report = await runDemo({
        world: f.sim ? 'sim' : 'tiny',
        outDir: f.outDir,
        problems: f.problems,
        seed: f.seed,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      process.stdout.write(f.json ? `${JSON.stringify(report, null, 2)}\n` : formatDemoReport(report));
    });
}
