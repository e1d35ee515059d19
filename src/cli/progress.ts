import cliProgress from 'cli-progress';
import type { JobProgress } from '../jobs/run-job.js';
import type { Db } from '../store/db.js';
import { updateRunCounts } from '../store/runs.js';

/**
 * A progress bar on stderr (stdout stays clean for JSON). Shown in CI logs too
 * (`noTTYOutput`), throttled there so logs stay short. `--quiet` / STEPWISE_QUIET hide it.
 */
export interface ProgressBar {
  update(done: number, total: number, extra?: string): void;
  stop(): void;
}

export function createProgressBar(label: string, options: { quiet?: boolean } = {}): ProgressBar {
  if (options.quiet || process.env.STEPWISE_QUIET) return { update() {}, stop() {} };
  const tty = Boolean(process.stderr.isTTY);
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | eta {eta_formatted} {extra}`,
      noTTYOutput: !tty,
      notTTYSchedule: 5000,
      hideCursor: tty,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total, extra = '') {
      if (!started) {
        bar.start(total, done, { extra });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { extra });
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/**
 * The `onProgress` of a resumable job: moves `bar` (noting resumed items) and keeps the run
 * record's counts current for `stepwise runs` and the web view, writing every 25 items and at the
 * end rather than once per item.
 */
export function trackJobProgress(bar: ProgressBar, db: Db, runId: string): (p: JobProgress) => void {
  const counts = trackRunCounts(db, runId);
  return (p) => {
    bar.update(p.done, p.total, p.resumed ? `(${p.resumed} resumed)` : '');
    counts(p);
  };
}

/** Keep a run record's counts fresh for `stepwise runs`: written every 25 items and at the end, not per item. */
export function trackRunCounts(db: Db, runId: string): (p: JobProgress) => void {
  let lastCounts = 0;
  return (p) => {
    if (p.done - lastCounts >= 25 || p.done === p.total) {
      lastCounts = p.done;
      updateRunCounts(db, runId, { done: p.done, total: p.total, resumed: p.resumed });
    }
  };
}
