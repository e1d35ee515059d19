import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { CostLedger } from '../core/cost.js';
import { InputError, UsageError } from '../core/errors.js';
import { SampleRowSchema } from '../data/record-kinds.js';
import { streamJsonl } from '../jobs/lines.js';
import { resumePhrase } from '../jobs/made-from.js';
import { runStreamJob } from '../jobs/run-job.js';
import { flagName } from '../jobs/settings.js';
import { formatFailureShare } from '../judge/common.js';
import { createJudge } from '../judge/index.js';
import { BatchPending } from '../models/batch.js';
import { defaultStorePath } from '../store/db.js';
import { validateRows } from '../train/label-file.js';
import { pickDifference, type SelectionInput, type SelectionRow, selectByJudge } from '../train/select.js';
import {
  resolveSelectConfig,
  SELECT_SETTINGS,
  type SelectConfig,
  selectJobSettings,
} from '../train/select-config.js';
import { batchOutcome, batchReport, openBatchFiles } from './batch.js';
import { type DatasetFlags, loadDatasetProblems } from './datasets.js';
import { runJobCommand } from './job-harness.js';
import { type RunFlags, type ServerFlags, serverOptionsOf } from './option-groups.js';
import { providers } from './providers.js';
import { settingsFromFlags } from './settings-options.js';
import { assertSimWorldInputs } from './sim-guard.js';
import { warn } from './warn.js';

/** The flags: the fields of {@link SelectConfig} by name (SELECT_SETTINGS), then where the job reads, writes and reaches. */
export type SelectFlags = Partial<SelectConfig> &
  RunFlags &
  ServerFlags &
  Partial<DatasetFlags> & {
    input: string;
    judge: string;
    strictResume?: boolean;
    batchOut?: string;
    batchIn?: string;
    simGuess?: boolean;
  };

/** Counts of a select job (the rows themselves stay on disk). */
interface SelectTotals {
  problems: number;
  picked: number;
  /** Problems whose two picks differ in text: the two training sets differ there. */
  differ: number;
  /** Problems whose judge pick is another sample with the outcome-only pick's text: the sets are the same there. */
  copies: number;
  formatFailures: number;
  judgeReplies: number;
}

/**
 * What `stepwise select` does once its flags are parsed: resolve the config, make the judge, and
 * pick each problem's best correct response in the job harness (run record, progress in
 * problems, summary). The input is read a line at a time as the job goes.
 */
export async function runSelectCommand(o: SelectFlags): Promise<void> {
  const config = resolveSelectConfig(settingsFromFlags(SELECT_SETTINGS, { ...o }), flagName);
  if (!existsSync(o.input)) throw new InputError({ file: o.input }, 'file not found');
  // Question texts from --dataset, looked up only when a row lacks its own.
  let questions: Map<string, string> | undefined;
  const questionOf = async (r: z.infer<typeof SampleRowSchema>): Promise<string> => {
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
      const [r] = validateRows(o.input, [{ line, value }], SampleRowSchema, {
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
  const batch = openBatchFiles(o, o.store);
  const judge = await createJudge(o.judge, { providers, ...serverOptionsOf(o), storePath: o.store, batch });
  // The job's world: the judge's (its ledger's, reply marks included) and, line by line, the
  // world of the responses picked from (a simulated policy's rows say so).
  const ledger = new CostLedger();
  ledger.saw(judge.world);
  const settings = selectJobSettings(config, { judge: o.judge });
  const shard = o.shard ? { shard: `${o.shard.index}/${o.shard.count}` } : {};
  const totals: SelectTotals = {
    problems: 0,
    picked: 0,
    differ: 0,
    copies: 0,
    // Rows resumed from a file written before these counts were kept count as zero.
    formatFailures: 0,
    judgeReplies: 0,
  };
  await runJobCommand({
    command: 'select',
    out: o.out,
    store: o.store ?? defaultStorePath(),
    record: { input: o.input, judge: o.judge, ...shard, job: settings },
    quiet: o.quiet,
    json: o.json,
    cleanup: () => judge.close?.(),
    async run({ onProgress }) {
      const result = await runStreamJob<SelectionInput & { simulated?: true }, SelectionRow>({
        items: inputs(),
        keyOf: (p) => p.id,
        keyOfOutput: (r) => r.id,
        out: o.out,
        concurrency: config.concurrency,
        fresh: o.fresh,
        strictResume: o.strictResume,
        onWarning: warn,
        unit: 'problems',
        shard: o.shard,
        settings,
        process: async (p) => {
          try {
            const { simulated: fromPolicy, ...input } = p;
            const [row] = await selectByJudge([input], judge, { seed: config.seed });
            // This line's work: the judge's (what its model is, or its marked replies) and the
            // policy's that wrote the responses.
            const work = new CostLedger();
            work.saw(judge.world);
            if (fromPolicy) work.saw('sim');
            ledger.saw(work.allWorlds);
            return work.simulated ? { ...row, simulated: true as const } : row;
          } catch (e) {
            // Its requests went to a batch file (--batch-out) or await one: a later round finishes it.
            if (e instanceof BatchPending) return undefined;
            throw e;
          }
        },
        onRecord: (r) => {
          totals.problems++;
          if (r.chosen) totals.picked++;
          const difference = pickDifference(r);
          if (difference === 'text') totals.differ++;
          if (difference === 'copy') totals.copies++;
          // A resumed line's world counts too: it is work of this job.
          if (r.simulated === true) ledger.saw('sim');
          totals.formatFailures += r.formatFailures ?? 0;
          totals.judgeReplies += r.judgeReplies ?? 0;
        },
        onProgress,
      });
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
      return result;
    },
    counts: (result) => ({
      problems: totals.problems,
      picked: totals.picked,
      ...(result.pending ? { pending: result.pending } : {}),
    }),
    summary: (result, runId) => {
      const { problems, picked, differ, copies, formatFailures, judgeReplies } = totals;
      ledger.saw(judge.world);
      const simulated = ledger.simulated;
      const formatFailureRate = formatFailureShare(formatFailures, judgeReplies);
      return {
        readable: {
          command: 'select',
          headline: `a response picked for ${picked} of ${problems} problems by ${o.judge}`,
          world: simulated ? `SIMULATED judge — not a real model` : undefined,
          lines: [
            [
              'vs outcome-only',
              `the judge's pick differs in text on ${differ} problems` +
                (copies ? ` (on ${copies} more it is another sample with the same text)` : ''),
            ],
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
        json: {
          run: runId,
          out: o.out,
          judge: o.judge,
          ...(simulated ? { simulated: true } : {}),
          ...shard,
          problems,
          picked,
          differsFromOutcomeOnly: differ,
          sameTextOtherSample: copies,
          formatFailures,
          judgeReplies,
          formatFailureRate,
          resumed: result.resumed,
          redone: result.redone,
          unverified: result.unverified,
          ...(result.pending ? { pending: result.pending } : {}),
          ...(batch ? { batch: batchReport(o, batch) } : {}),
        },
      };
    },
  });
}
