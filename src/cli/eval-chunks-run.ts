import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import { settingsDefaults } from '../core/settings-schema.js';
import {
  type ChunkEvalReport,
  chunkRowsPath,
  evaluateChunks,
  readLabeledSolutions,
} from '../evaluate/chunks.js';
import { EVAL_CHUNKS_SETTINGS } from '../evaluate/config.js';
import { isSimulatedJudge } from '../evaluate/processbench.js';
import { LABEL_SIGNALS, type LabelSignal } from '../label/signals.js';
import { buildEvalJudge, type JudgeFlags, writeJson } from './eval-processbench-run.js';
import { runJobCommand } from './job-harness.js';

import { assertSimWorldInputs } from './sim-guard.js';

/** The flags of `eval chunks`. */
export interface EvalChunksFlags extends JudgeFlags {
  input: string;
  signal: string;
  out?: string;
  segmentation?: Segmentation;
  concurrency?: number;
}

/** The flags that were given (a schema's default fills the others). */
function definedOf(flags: EvalChunksFlags): Partial<EvalChunksFlags> {
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
}

const pct = (v: number | null): string => (v === null ? '—' : `${(100 * v).toFixed(1)}%`);

/**
 * What `stepwise eval chunks` does once its flags are parsed: read the labeled solutions, build the
 * judge, and compare its verdicts with the labels in the job harness (run record, progress, summary).
 */
export async function runEvalChunksCommand(flags: EvalChunksFlags): Promise<void> {
  if (!(LABEL_SIGNALS as readonly string[]).includes(flags.signal))
    throw new UsageError(`--signal must be one of ${LABEL_SIGNALS.join(', ')} (got "${flags.signal}")`);
  const signal = flags.signal as LabelSignal;
  const solutions = readLabeledSolutions(flags.input, signal);
  assertSimWorldInputs(
    { judge: flags.judge },
    solutions.map((s) => ({ id: s.id, question: s.problem.question })),
    { guess: flags.simGuess, source: flags.input },
  );
  if (solutions.length === 0) throw new UsageError(`${flags.input}: no labelled solutions`);
  // The judge sees a solution's chunks as the policy wrote them: asking for another
  // segmentation than the labels were made under would judge chunks the policy never wrote.
  const labeledWith = solutions[0].segmentation ?? 'paragraph';
  const mixed = solutions.findIndex((s) => (s.segmentation ?? 'paragraph') !== labeledWith);
  if (mixed >= 0)
    throw new UsageError(`${flags.input}: solutions labeled under both paragraph and tags segmentation`);
  if (flags.segmentation !== undefined && flags.segmentation !== labeledWith)
    throw new UsageError(
      `${flags.input} was labeled with --segmentation ${labeledWith}, not ${flags.segmentation}: judge it as it was labeled`,
    );
  const segmentation = flags.segmentation ?? labeledWith;
  const settings = { ...settingsDefaults(EVAL_CHUNKS_SETTINGS), ...definedOf(flags) } as EvalChunksFlags;
  const judge = await buildEvalJudge(settings);
  const out = flags.out;
  await runJobCommand<ChunkEvalReport>({
    command: 'eval chunks',
    out,
    store: flags.store,
    record: { judge: judge.name, labels: resolve(flags.input), signal, segmentation },
    quiet: flags.quiet,
    json: flags.json,
    label: `eval chunks${isSimulatedJudge(judge) ? ' (simulated)' : ''}`,
    cleanup: () => judge.close?.(),
    async run({ bar }) {
      const report = await evaluateChunks({
        ...{ judge, solutions, signal, votes: settings.judgeVotes, concurrency: settings.concurrency },
        segmentation,
        onProgress: (p) => bar.update(p.done, p.total),
        // Per-chunk judge vs label rows beside the report (the web view shows them with the calibration plot).
        ...(out ? { rowsPath: chunkRowsPath(out) } : {}),
      });
      if (out) writeJson(out, report);
      return report;
    },
    counts: (r) => ({ solutions: r.solutions, chunks: r.n }),
    summary: (report, runId) => ({
      readable: {
        command: 'eval chunks',
        headline: `judge ${report.judge} vs ${signal} labels: ${report.n} chunks of ${report.solutions} solutions compared`,
        world: report.simulated ? 'SIMULATED judge — not a real model' : undefined,
        lines: [
          ...(report.notice ? [['notice', report.notice] as const] : []),
          [
            'chunks',
            `${report.positives} positive, ${report.negatives} negative; the judge abstained on ${report.abstained}`,
          ],
          ['accuracy', pct(report.accuracy)],
          ['balanced acc.', pct(report.balanced_accuracy)],
          ['recall (+)', pct(report.recall_positive)],
          ['recall (−)', pct(report.recall_negative)],
          [
            'first error',
            `${pct(report.first_error_accuracy)} of solutions: predicted first error = labelled one`,
          ],
          [
            'format fails',
            `${report.formatFailures} of ${report.replies} judge replies (${(100 * report.formatFailureRate).toFixed(1)}%); first error left open on ${report.abstainedSolutions} solutions`,
          ],
          [
            'calibration',
            report.calibration.gap === null
              ? 'no chunk has both a judge score and a Q̂'
              : `mean |judge score − Q̂| ${report.calibration.gap.toFixed(3)} over ${report.calibration.n} chunks (10 score bins in the report)`,
          ],
          [
            'judge cost',
            `${report.cost.judge.calls} calls, ${report.cost.judge.promptTokens + report.cost.judge.completionTokens} tokens`,
          ],
        ],
        wrote: out ? [out, chunkRowsPath(out)] : [],
        run: runId,
      },
      json: report as unknown as Record<string, unknown>,
    }),
  });
}
