import cliProgress from 'cli-progress';
import { requestsInFlight, WAITING_AFTER_MS, waitingOn } from '../core/in-flight.js';
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

/** Bars started and not stopped: Ctrl-C stops them, which gives the terminal back its line wrap. */
const live = new Set<() => void>();

/**
 * Stop every running bar and give the terminal back what the bars took: cli-progress turns line
 * wrap and the cursor off while it draws, and a process that exits mid-bar (Ctrl-C) leaves them
 * off until `reset`, cutting every later long line at the terminal's width.
 */
export function restoreTerminal(): void {
  for (const stop of live) stop();
  live.clear();
  // Line wrap on, cursor shown: harmless when already so.
  if (process.stderr.isTTY) process.stderr.write('\x1b[?7h\x1b[?25h');
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
      // An unknown eta (no progress yet: cli-progress's 'INF'/'NULL') reads "eta --", not "eta NFs".
      formatTime: (t, opts, roundTo) =>
        typeof t === 'number' && Number.isFinite(t) ? cliProgress.Format.TimeFormat(t, opts, roundTo) : '--',
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  // A bar that has not moved for a few seconds says what the job waits on (core/in-flight).
  let last = { done: -1, extra: '' };
  let movedAt = Date.now();
  const timer = setInterval(() => {
    if (!started) return;
    const waiting = waitingOn(movedAt);
    if (waiting) bar.update(last.done, { extra: `${last.extra ? `${last.extra} ` : ''}— ${waiting}` });
  }, 1000);
  timer.unref();
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
    if (started && live.delete(stop)) bar.stop();
  };
  return {
    update(done, total, extra = '') {
      // Stopped (the job ended, or Ctrl-C gave the terminal back): work still in flight draws nothing.
      if (stopped) return;
      if (done !== last.done) movedAt = Date.now();
      last = { done, extra };
      if (!started) {
        bar.start(total, done, { extra });
        live.add(stop);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { extra });
      }
    },
    stop,
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
    const notes = [p.resumed ? `${p.resumed} resumed` : '', p.redone ? `${p.redone} redone` : ''].filter(
      Boolean,
    );
    bar.update(p.done, p.total, `${p.unit ?? ''}${notes.length ? ` (${notes.join(', ')})` : ''}`.trim());
    counts(p);
  };
}

/** Keep a run record's counts fresh for `stepwise runs`: written every 25 items and at the end, not per item. */
export function trackRunCounts(db: Db, runId: string): (p: JobProgress) => void {
  let lastCounts = 0;
  let movedAt = Date.now();
  let waitingNoted = false;
  let latest: JobProgress | undefined;
  const write = (p: JobProgress, extra: Record<string, number> = {}) =>
    updateRunCounts(db, runId, {
      done: p.done,
      total: p.total,
      resumed: p.resumed,
      ...(p.redone ? { redone: p.redone } : {}),
      ...extra,
    });
  // The store says a stalled run waits too: requests in flight and seconds without progress.
  const timer = setInterval(() => {
    if (!latest || !waitingOn(movedAt)) return;
    waitingNoted = true;
    const inFlight = requestsInFlight().reduce((a, s) => a + s.requests, 0);
    write(latest, { inFlight, waitingSeconds: Math.round((Date.now() - movedAt) / 1000) });
  }, WAITING_AFTER_MS);
  timer.unref();
  return (p) => {
    if (!latest || p.done !== latest.done) movedAt = Date.now();
    latest = p;
    if (p.done - lastCounts >= 25 || p.done === p.total || waitingNoted) {
      lastCounts = p.done;
      write(p, waitingNoted ? { inFlight: 0, waitingSeconds: 0 } : {});
      waitingNoted = false;
    }
    if (p.done === p.total) clearInterval(timer);
  };
}
