import { setMaxListeners } from 'node:events';
import { StepwiseError } from '../core/errors.js';
import type { JobProgress } from '../jobs/run-job.js';
import { type Db, defaultStorePath, openStore } from '../store/db.js';
import { finishRun, interruptActiveRuns, startRun } from '../store/runs.js';
import { createProgressBar, type ProgressBar, restoreTerminal, trackRunCounts } from './progress.js';
import { type JobSummary, reportJob } from './summary.js';

/**
 * The one harness of a job command (changesets' shape: the command declares its options and calls
 * the library; this runs it). It alone owns the run record (started, counted as the job goes,
 * finished done or failed), the progress bar (in the job's own unit), Ctrl-C (see
 * {@link onInterrupt}), cleanup, and the summary (readable on stderr, `--json` on stdout).
 */
export interface JobSpec<R> {
  /** The command, as run records name it (`label`, `bench search`). */
  command: string;
  /** The main output file, when the job writes one (the run record's; what Ctrl-C says is kept). */
  out?: string;
  /** `--store` (default `$STEPWISE_HOME/store.sqlite`). */
  store?: string;
  /** A store already open (a caller running several jobs in one store, as the demo does); wins over `store`. */
  db?: Db;
  /** What the run record keeps of this run (its config, with `job`: the settings record). */
  record: Record<string, unknown>;
  quiet?: boolean;
  json?: boolean;
  /** The progress bar's label (default: the command), e.g. `search beam`. */
  label?: string;
  /**
   * Start the run record when the job calls `onStart` (once its output is known to be resumable),
   * not before it runs: a rerun the output refuses then leaves no run behind (search).
   */
  startWhenResumable?: boolean;
  /**
   * The job stops on Ctrl-C by itself (it takes `signal`, sends nothing new once it is aborted
   * and keeps what finished): the harness records the run as interrupted with the counts so far
   * and exits 130 with the resume hint. Otherwise Ctrl-C ends the process ({@link onInterrupt}).
   */
  stopsOnInterrupt?: boolean;
  /** Items the job has in all, for the counts of a run interrupted before its first progress. */
  total?: number;
  /**
   * The job itself: report progress through `onProgress` (`detail`: what the bar says after the
   * unit, e.g. `correct 3`). `runId` starts the run record if it is not started yet. `signal` is
   * set when the job {@link stopsOnInterrupt}.
   */
  run(job: {
    db: Db;
    runId: string;
    bar: ProgressBar;
    onProgress: (p: JobProgress, detail?: string) => void;
    onStart: () => void;
    signal?: AbortSignal;
  }): Promise<R>;
  /** The run record's final counts. */
  counts(result: R): Record<string, number>;
  /**
   * The summary, readable and as JSON. The readable one is a {@link JobSummary}, or text of the
   * job's own layout written as it is (a report table; '' for none). None: nothing is printed (a
   * step of a larger job, as the demo's, whose caller reports the whole).
   */
  summary?(result: R, runId: string): { readable: JobSummary | string; json: Record<string, unknown> };
  /** Always run at the end (close models, files). */
  cleanup?: () => unknown;
}

/** What the bar says beside its count: the unit, a detail, and what was resumed or redone. */
function progressText(p: JobProgress, detail?: string): string {
  const notes = [p.resumed ? `${p.resumed} resumed` : '', p.redone ? `${p.redone} redone` : ''].filter(
    Boolean,
  );
  const what = [p.unit, detail].filter(Boolean).join(', ');
  return `${what}${notes.length ? ` (${notes.join(', ')})` : ''}`.trim();
}

/** Run a job command: see {@link JobSpec}. */
export async function runJobCommand<R>(spec: JobSpec<R>): Promise<R> {
  const db = spec.db ?? openStore(spec.store ?? defaultStorePath());
  let runId: string | undefined;
  let counts: ((p: JobProgress) => void) | undefined;
  const start = (): string => {
    if (runId === undefined) {
      runId = startRun(db, spec.command, spec.record, spec.out);
      counts = trackRunCounts(db, runId);
    }
    return runId;
  };
  if (!spec.startWhenResumable) start();
  const bar = createProgressBar(spec.label ?? spec.command, { quiet: spec.quiet });
  const interrupt = spec.stopsOnInterrupt ? new AbortController() : undefined;
  // One signal is shared by every request in flight (each adds an abort listener).
  if (interrupt) setMaxListeners(1_000_000, interrupt.signal);
  const onSigint = (): void => interrupt?.abort();
  if (interrupt) process.once('SIGINT', onSigint);
  let progress: Record<string, number> = { done: 0, total: spec.total ?? 0, resumed: 0 };
  try {
    const result = await spec.run({
      db,
      get runId() {
        return start();
      },
      bar,
      onProgress: (p, detail) => {
        progress = {
          done: p.done,
          total: p.total,
          resumed: p.resumed,
          ...(p.redone ? { redone: p.redone } : {}),
        };
        bar.update(p.done, p.total, progressText(p, detail));
        counts?.(p);
      },
      onStart: () => void start(),
      signal: interrupt?.signal,
    });
    interrupt?.signal.throwIfAborted();
    bar.stop();
    const id = start();
    finishRun(db, id, 'done', spec.counts(result));
    const { readable, json } = spec.summary?.(result, id) ?? { readable: '', json: undefined };
    if (json === undefined) return result;
    if (typeof readable !== 'string') reportJob(readable, json, { json: spec.json });
    else {
      process.stderr.write(readable);
      if (spec.json) process.stdout.write(`${JSON.stringify(json)}\n`);
    }
    return result;
  } catch (e) {
    bar.stop();
    if (interrupt?.signal.aborted) {
      const id = start();
      finishRun(db, id, 'interrupted', progress);
      const hint = interruptMessage([{ id, command: spec.command, output: spec.out ?? null }]);
      throw new StepwiseError(hint.trim().replace(/^stepwise: /, ''), { exitCode: 130 });
    }
    if (runId !== undefined) finishRun(db, runId, 'failed');
    throw e;
  } finally {
    if (interrupt) process.removeListener('SIGINT', onSigint);
    await spec.cleanup?.();
  }
}

/** Commands whose output a rerun resumes (each finished item or point is written at once). */
const RESUMABLE = new Set([
  'sample',
  'label',
  'search',
  'bench search',
  'eval processbench',
  'select',
  'label-code',
  'segment',
]);

/**
 * What Ctrl-C prints: each part on its own line (after the progress bar's), so none is lost
 * past the terminal's width.
 */
export function interruptMessage(
  runs: ReadonlyArray<{ id: string; command: string; output: string | null }>,
): string {
  const lines = ['stepwise: interrupted'];
  for (const r of runs) lines.push(`  run ${r.id} (\`stepwise ${r.command}\`) recorded as interrupted`);
  const resumable = runs.filter((r) => RESUMABLE.has(r.command) && r.output !== null);
  if (resumable.length > 0) {
    for (const r of resumable) lines.push(`  finished work is kept in ${r.output}`);
    lines.push('  rerun the same command to resume');
  }
  return `\n${lines.join('\n')}\n`;
}

/**
 * Ctrl-C: the terminal gets its line wrap and cursor back (the bar took them), then — unless the
 * command stops gracefully itself (`sample`, `segment` listen for SIGINT too) — every open run is
 * recorded as interrupted and the hint says where finished work is kept. Jobs append each
 * finished record at once, so stopping loses only work in flight.
 */
export function onInterrupt(): void {
  restoreTerminal();
  if (process.listenerCount('SIGINT') > 1) return;
  process.stderr.write(interruptMessage(interruptActiveRuns()));
  process.exit(130);
}
