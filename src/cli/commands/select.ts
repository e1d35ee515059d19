import type { Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../core/errors.js';
import { isSimulatedJudge } from '../../evaluate/processbench.js';
import { readJsonl } from '../../jobs/jsonl.js';
import { runJsonlJob } from '../../jobs/run-job.js';
import { jobSettings } from '../../jobs/settings.js';
import { formatFailureShare } from '../../judge/common.js';
import { createJudge } from '../../judge/index.js';
import { defaultStorePath, finishRun, openStore, startRun } from '../../store/index.js';
import { validateRows } from '../../train/label-file.js';
import { type SelectionInput, type SelectionRow, selectByJudge } from '../../train/select.js';
import { addDatasetLookupOptions, loadDatasetProblems } from '../datasets.js';
import { addInputOption, intOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import { assertSimWorldInputs } from '../sim-guard.js';
import { JSON_HELP, reportJob } from '../summary.js';
import { apiKeyOption, storeOption } from '../vocabulary.js';

const SampleRow = z.looseObject({
  id: z.string(),
  simulated: z.boolean().optional(),
  question: z.string().optional(),
  problem: z.string().optional(),
  samples: z.array(
    z.looseObject({ text: z.string(), correct: z.boolean(), chunks: z.array(z.any()).optional() }),
  ),
});

export function register(program: Command): void {
  const cmd = program
    .command('select')
    .description("Pick each problem's best correct response by mean judge score (StepWiser data selection)");
  addDatasetLookupOptions(cmd, 'where to find question texts when the sample rows lack them');
  addInputOption(cmd, '`stepwise sample` output (one line per problem with samples)', ['from'])
    .requiredOption('--judge <spec>', 'judge spec (see docs/judges.md), e.g. generative:openai:MODEL or sim')
    .requiredOption(
      '--out <file>',
      'output JSONL: one line per problem with the judge pick and the outcome-only pick',
    )
    .option('--base-url <url>', 'for openai: judges (or OPENAI_BASE_URL)')
    .addOption(apiKeyOption())
    .addOption(storeOption())
    .option('--concurrency <n>', 'problems judged at once', intOption('--concurrency', 1), 8)
    .option('--seed <n>', 'seed of the outcome-only pick', intOption('--seed'), 0)
    .option('--fresh', 'start the output over instead of resuming it')
    .option(
      '--sim-guess',
      "let a simulated judge judge inputs that are not the simulated world's problems (seeded guesses)",
    )
    .option('--quiet', 'no progress bar')
    .option('--json', JSON_HELP)
    .action(async (o) => {
      const rows = validateRows(o.input, readJsonl(o.input).lines, SampleRow, {
        kinds: ['sample'],
        who: 'select',
      });
      let questions = new Map<string, string>();
      if (rows.some((r) => r.question === undefined && r.problem === undefined)) {
        if (!o.dataset)
          throw new UsageError(
            `${o.input} rows have no question text: pass --dataset and --path to look them up`,
          );
        const problems = await loadDatasetProblems({ ...o, dataset: o.dataset });
        questions = new Map(problems.map((p) => [p.id, p.question]));
      }
      // Responses a simulated policy wrote keep saying so in the rows picked from them.
      const simulatedInput = new Set(rows.filter((r) => r.simulated === true).map((r) => r.id));
      const inputs: SelectionInput[] = rows.map((r) => {
        const question = r.question ?? r.problem ?? questions.get(r.id);
        if (question === undefined) throw new UsageError(`no question found for problem ${r.id}`);
        return { id: r.id, question, samples: r.samples };
      });
      assertSimWorldInputs({ judge: o.judge }, inputs, { guess: o.simGuess, source: o.input });
      const judge = await createJudge(o.judge, { baseUrl: o.baseUrl, apiKey: o.apiKey, storePath: o.store });
      const store = openStore(o.store ?? defaultStorePath());
      const settings = jobSettings('select', { judge: o.judge, seed: o.seed });
      const runId = startRun(store, 'select', { input: o.input, judge: o.judge, job: settings }, o.out);
      const bar = createProgressBar('select', { quiet: o.quiet });
      try {
        const out = await runJsonlJob<SelectionInput, SelectionRow>({
          items: inputs,
          keyOf: (p) => p.id,
          keyOfOutput: (r) => r.id,
          out: o.out,
          concurrency: o.concurrency,
          fresh: o.fresh,
          settings,
          process: async (p) => {
            const [row] = await selectByJudge([p], judge, { seed: o.seed });
            // A simulated judge's pick (known by its name or its marked replies) says so on its
            // own line, and so does a pick among a simulated policy's responses.
            return judge.simulated || simulatedInput.has(p.id) ? { ...row, simulated: true as const } : row;
          },
          onProgress: (p) => bar.update(p.done, p.total),
        });
        bar.stop();
        const picked = out.filter((r) => r.chosen).length;
        const differ = out.filter(
          (r) => r.chosen && r.outcomeOnly && r.chosen.index !== r.outcomeOnly.index,
        ).length;
        finishRun(store, runId, 'done', { problems: out.length, picked });
        const simulated = isSimulatedJudge(judge) || out.some((r) => r.simulated === true);
        // Rows resumed from a file written before these counts were kept count as zero.
        const formatFailures = out.reduce((s, r) => s + (r.formatFailures ?? 0), 0);
        const judgeReplies = out.reduce((s, r) => s + (r.judgeReplies ?? 0), 0);
        const formatFailureRate = formatFailureShare(formatFailures, judgeReplies);
        reportJob(
          {
            command: 'select',
            headline: `a response picked for ${picked} of ${out.length} problems by ${o.judge}`,
            world: simulated ? `SIMULATED judge — not a real model` : undefined,
            lines: [
              ['vs outcome-only', `the judge's pick differs on ${differ} problems`],
              [
                'format fails',
                `${formatFailures} of ${judgeReplies} judge replies (${(100 * formatFailureRate).toFixed(1)}%)`,
              ],
            ],
            wrote: [o.out],
            run: runId,
          },
          {
            run: runId,
            out: o.out,
            judge: o.judge,
            ...(simulated ? { simulated: true } : {}),
            problems: out.length,
            picked,
            differsFromOutcomeOnly: differ,
            formatFailures,
            judgeReplies,
            formatFailureRate,
          },
          o,
        );
      } catch (e) {
        bar.stop();
        finishRun(store, runId, 'failed');
        throw e;
      } finally {
        await judge.close?.();
      }
    });
}
