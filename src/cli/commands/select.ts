import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { InputError, UsageError } from '../../core/errors.js';
import { isSimulatedJudge } from '../../evaluate/processbench.js';
import { streamJsonl } from '../../jobs/lines.js';
import { resumePhrase } from '../../jobs/made-from.js';
import { runStreamJob } from '../../jobs/run-job.js';
import { jobSettings } from '../../jobs/settings.js';
import { formatFailureShare } from '../../judge/common.js';
import { createJudge } from '../../judge/index.js';
import { BatchPending } from '../../models/batch.js';
import { defaultStorePath, finishRun, openStore, startRun } from '../../store/index.js';
import { validateRows } from '../../train/label-file.js';
import { type SelectionInput, type SelectionRow, selectByJudge } from '../../train/select.js';
import { addBatchOptions, batchOutcome, batchReport, openBatchFiles } from '../batch.js';
import { addConfigOption } from '../config-file.js';
import { addDatasetLookupOptions, loadDatasetProblems } from '../datasets.js';
import { baseUrlOption, jsonOption, quietOption, seedOption } from '../option-groups.js';
import { addInputOption, intOption, shardOption } from '../options.js';
import { createProgressBar } from '../progress.js';
import { assertSimWorldInputs } from '../sim-guard.js';
import { JSON_HELP, reportJob } from '../summary.js';
import { apiKeyOption, storeOption, strictResumeOption } from '../vocabulary.js';

const SampleRow = z.looseObject({
  id: z.string(),
  simulated: z.boolean().optional(),
  question: z.string().optional(),
  problem: z.string().optional(),
  segmentation: z.enum(['paragraph', 'tags']).optional(),
  samples: z.array(
    z.looseObject({
      text: z.string(),
      correct: z.boolean(),
      chunks: z.array(z.any()).optional(),
      segmentation: z.enum(['paragraph', 'tags']).optional(),
    }),
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
    .addOption(baseUrlOption('for openai: judges (or OPENAI_BASE_URL)'))
    .addOption(apiKeyOption())
    .addOption(storeOption())
    .option('--concurrency <n>', 'problems judged at once', intOption('--concurrency', 1), 8)
    .addOption(seedOption('seed of the outcome-only pick', { default: 0 }))
    .option('--fresh', 'start the output over instead of resuming it')
    .addOption(strictResumeOption())
    .addOption(shardOption('problems'));
  addBatchOptions(cmd, "the judge's")
    .option(
      '--sim-guess',
      "let a simulated judge judge inputs that are not the simulated world's problems (seeded guesses)",
    )
    .addOption(quietOption('no progress bar'))
    .addOption(jsonOption(JSON_HELP))
    .action(async (o) => {
      if (!existsSync(o.input)) throw new InputError({ file: o.input }, 'file not found');
      // Question texts from --dataset, looked up only when a row lacks its own.
      let questions: Map<string, string> | undefined;
      const questionOf = async (r: z.infer<typeof SampleRow>): Promise<string> => {
        const own = r.question ?? r.problem;
        if (own !== undefined) return own;
        if (!o.dataset)
          throw new UsageError(
            `${o.input} rows have no question text: pass --dataset and --path to look them up`,
          );
        if (!questions) {
          const problems = await loadDatasetProblems({ ...o, dataset: o.dataset });
          questions = new Map(problems.map((p) => [p.id, p.question]));
        }
        const q = questions.get(r.id);
        if (q === undefined) throw new UsageError(`no question found for problem ${r.id}`);
        return q;
      };
      // The input is read a line at a time as the job proceeds (a sample file can be far larger
      // than memory); each row is checked as it is reached. Responses a simulated policy wrote
      // keep saying so in the rows picked from them.
      async function* inputs(): AsyncGenerator<SelectionInput & { simulated?: true }> {
        for (const { line, value } of streamJsonl(o.input)) {
          const [r] = validateRows(o.input, [{ line, value }], SampleRow, {
            kinds: ['sample'],
            who: 'select',
          });
          const input = {
            id: r.id,
            question: await questionOf(r),
            samples: r.samples,
            ...(r.segmentation ? { segmentation: r.segmentation } : {}),
            ...(r.simulated === true ? { simulated: true as const } : {}),
          };
          assertSimWorldInputs({ judge: o.judge }, [input], { guess: o.simGuess, source: o.input });
          yield input;
        }
      }
      const store = openStore(o.store ?? defaultStorePath());
      const batch = openBatchFiles(o, o.store);
      const judge = await createJudge(o.judge, {
        baseUrl: o.baseUrl,
        apiKey: o.apiKey,
        storePath: o.store,
        batch,
      });
      const settings = jobSettings('select', { judge: o.judge, seed: o.seed });
      const runId = startRun(
        store,
        'select',
        {
          input: o.input,
          judge: o.judge,
          ...(o.shard ? { shard: `${o.shard.index}/${o.shard.count}` } : {}),
          job: settings,
        },
        o.out,
      );
      const bar = createProgressBar('select', { quiet: o.quiet });
      // Counts only: the rows themselves stay on disk.
      let problems = 0;
      let picked = 0;
      let differ = 0;
      let anySimulated = false;
      // Rows resumed from a file written before these counts were kept count as zero.
      let formatFailures = 0;
      let judgeReplies = 0;
      try {
        const result = await runStreamJob<SelectionInput & { simulated?: true }, SelectionRow>({
          items: inputs(),
          keyOf: (p) => p.id,
          keyOfOutput: (r) => r.id,
          out: o.out,
          concurrency: o.concurrency,
          fresh: o.fresh,
          strictResume: o.strictResume,
          onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
          unit: 'problems',
          shard: o.shard,
          settings,
          process: async (p) => {
            try {
              const { simulated: fromPolicy, ...input } = p;
              const [row] = await selectByJudge([input], judge, { seed: o.seed });
              // A simulated judge's pick (known by its name or its marked replies) says so on its
              // own line, and so does a pick among a simulated policy's responses.
              return judge.simulated || fromPolicy ? { ...row, simulated: true as const } : row;
            } catch (e) {
              // Its requests went to a batch file (--batch-out) or await one: a later round finishes it.
              if (e instanceof BatchPending) return undefined;
              throw e;
            }
          },
          onRecord: (r) => {
            problems++;
            if (r.chosen) picked++;
            if (r.chosen && r.outcomeOnly && r.chosen.index !== r.outcomeOnly.index) differ++;
            if (r.simulated === true) anySimulated = true;
            formatFailures += r.formatFailures ?? 0;
            judgeReplies += r.judgeReplies ?? 0;
          },
          onProgress: (p) => bar.update(p.done, p.total),
        });
        bar.stop();
        batch?.close();
        if (batch) {
          const failed = batchOutcome(o, batch, {
            pending: result.pending,
            unit: 'problems',
            modelId: judge.model?.modelId ?? o.judge,
            chat: true,
          });
          if (failed) throw failed;
        }
        finishRun(store, runId, 'done', {
          problems,
          picked,
          ...(result.pending ? { pending: result.pending } : {}),
        });
        const simulated = isSimulatedJudge(judge) || anySimulated;
        const formatFailureRate = formatFailureShare(formatFailures, judgeReplies);
        reportJob(
          {
            command: 'select',
            headline: `a response picked for ${picked} of ${problems} problems by ${o.judge}`,
            world: simulated ? `SIMULATED judge — not a real model` : undefined,
            lines: [
              ['vs outcome-only', `the judge's pick differs on ${differ} problems`],
              [
                'format fails',
                `${formatFailures} of ${judgeReplies} judge replies (${(100 * formatFailureRate).toFixed(1)}%)`,
              ],
              ['resume', resumePhrase(result)],
              ...(result.pending
                ? ([['pending', `${result.pending} problems wait for batch answers`]] as Array<
                    [string, string]
                  >)
                : []),
            ],
            wrote: [o.out],
            run: runId,
          },
          {
            run: runId,
            out: o.out,
            judge: o.judge,
            ...(simulated ? { simulated: true } : {}),
            ...(o.shard ? { shard: `${o.shard.index}/${o.shard.count}` } : {}),
            problems,
            picked,
            differsFromOutcomeOnly: differ,
            formatFailures,
            judgeReplies,
            formatFailureRate,
            resumed: result.resumed,
            redone: result.redone,
            unverified: result.unverified,
            ...(result.pending ? { pending: result.pending } : {}),
            ...(batch ? { batch: batchReport(o, batch) } : {}),
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
  addConfigOption(cmd, { command: 'select' });
}
