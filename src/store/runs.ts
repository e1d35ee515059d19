import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { redactSecrets } from '../core/redact.js';
import type { Db } from './db.js';

/**
 * A run is `running` until it finishes as `done` or `failed`, or is stopped by Ctrl-C
 * (`interrupted`). A process killed outright (SIGKILL, out of memory, power loss) cannot say so:
 * its run records the process (pid, host, start time), and reading runs on that host marks a
 * run whose process is gone as `interrupted`, with the reason. Runs of another host stay
 * `running` (their processes cannot be seen from here).
 */
export type RunStatus = 'running' | 'done' | 'failed' | 'interrupted';

/** Runs this process started and has not finished: Ctrl-C marks them interrupted. */
const active = new Map<string, Db>();

/** Mark every run this process still has open as `interrupted` (Ctrl-C); returns them. */
export function interruptActiveRuns(): Array<{ id: string; command: string; output: string | null }> {
  const out: Array<{ id: string; command: string; output: string | null }> = [];
  for (const [id, db] of active) {
    try {
      const run = getRun(db, id);
      finishRun(db, id, 'interrupted');
      if (run) out.push({ id, command: run.command, output: run.output });
    } catch {
      // The store may be closed already; the run then stays `running`.
    }
  }
  active.clear();
  return out;
}

/** One recorded run of a command: what ran, with which config, when, and how much it did. */
export interface RunRecord {
  id: string;
  /** The name the user gave it (`--name`, kept in its config), null when none. */
  name: string | null;
  command: string;
  config: Record<string, unknown>;
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  counts: Record<string, number>;
  /** The main output file, when the run writes one. */
  output: string | null;
  /** The process that runs (ran) the job, and its host; null for runs recorded before they were kept. */
  pid: number | null;
  host: string | null;
  /** Why a run ended other than by its own hand, e.g. its process was gone while it was running. */
  endReason: string | null;
}

interface RunRow {
  id: string;
  command: string;
  config: string;
  status: RunStatus;
  started_at: string;
  ended_at: string | null;
  counts: string;
  output: string | null;
  pid: number | null;
  host: string | null;
  proc_start: string | null;
  end_reason: string | null;
}

function fromRow(r: RunRow): RunRecord {
  // Redacted on the way out too: a store written before secrets were kept out still serves none.
  const config = redactSecrets(JSON.parse(r.config) as Record<string, unknown>);
  return {
    id: r.id,
    name: typeof config.name === 'string' ? config.name : null,
    command: r.command,
    config,
    status: r.status,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    counts: JSON.parse(r.counts),
    output: r.output,
    pid: r.pid ?? null,
    host: r.host ?? null,
    endReason: r.end_reason ?? null,
  };
}

/**
 * When process `pid` started, as the kernel says (Linux: field 22 of /proc/<pid>/stat, clock
 * ticks since boot); null where that cannot be read. With the pid it names one process: a pid
 * reused by a later process has another start time.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether process `pid` (started at `start`, when known) still exists on this host. */
function processAlive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it exists, under another user.
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (start === null) return true;
  const now = processStartTime(pid);
  return now === null || now === start;
}

/**
 * Mark runs of this host whose process is gone as `interrupted` (the process was killed outright
 * and could not say so). Returns how many were marked.
 */
export function settleOrphanedRuns(db: Db): number {
  const here = hostname();
  const rows = db
    .prepare("SELECT id, pid, proc_start FROM runs WHERE status = 'running' AND host = ? AND pid IS NOT NULL")
    .all(here) as Array<{ id: string; pid: number; proc_start: string | null }>;
  let marked = 0;
  for (const r of rows) {
    if (processAlive(r.pid, r.proc_start)) continue;
    const reason = `its process (pid ${r.pid} on ${here}) ended without finishing the run: killed or crashed`;
    marked += db
      .prepare("UPDATE runs SET status = 'interrupted', end_reason = ? WHERE id = ? AND status = 'running'")
      .run(reason, r.id).changes;
  }
  return marked;
}

/**
 * The name the CLI's `--name` gives the runs this process starts (one command per process; see
 * src/cli/run-name.ts). A config that names its run itself keeps its own name.
 */
let runName: string | undefined;
export function setRunName(name: string | undefined): void {
  runName = name;
}

/**
 * Record the start of a run; returns its id. The config is stored with its secrets redacted
 * (core/redact): an API key or URL credentials never reach the store, `stepwise runs` or the web.
 */
export function startRun(db: Db, command: string, config: Record<string, unknown>, output?: string): string {
  if (runName !== undefined && config.name === undefined) config = { ...config, name: runName };
  const id = `${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14)}-${randomUUID().slice(0, 8)}`;
  db.prepare(
    'INSERT INTO runs (id, command, config, status, started_at, counts, output, pid, host, proc_start) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    // Stored absolute, so the web view can find the file whatever folder it was started from.
  ).run(
    id,
    command,
    JSON.stringify(redactSecrets(config)),
    'running',
    new Date().toISOString(),
    '{}',
    output ? resolve(output) : null,
    process.pid,
    hostname(),
    processStartTime(process.pid),
  );
  active.set(id, db);
  return id;
}

/** Update a run's progress counts (merged into what is there). */
export function updateRunCounts(db: Db, id: string, counts: Record<string, number>): void {
  const row = db.prepare('SELECT counts FROM runs WHERE id = ?').get(id) as { counts: string } | undefined;
  if (!row) return;
  const merged = { ...JSON.parse(row.counts), ...counts };
  db.prepare('UPDATE runs SET counts = ? WHERE id = ?').run(JSON.stringify(merged), id);
}

/** Mark a run finished (`done` or `failed`), stamp its end time, and merge final counts. */
export function finishRun(
  db: Db,
  id: string,
  status: Exclude<RunStatus, 'running'>,
  counts?: Record<string, number>,
): void {
  active.delete(id);
  if (counts) updateRunCounts(db, id, counts);
  db.prepare('UPDATE runs SET status = ?, ended_at = ? WHERE id = ?').run(
    status,
    new Date().toISOString(),
    id,
  );
}

/** Which runs {@link listRuns} returns. */
export interface RunFilter {
  command?: string;
  status?: RunStatus;
}

/** Recorded runs, newest first, at most `limit`, optionally only one command or status. */
export function listRuns(db: Db, limit = 50, filter: RunFilter = {}): RunRecord[] {
  settleOrphanedRuns(db);
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (filter.command !== undefined) {
    where.push('command = ?');
    params.push(filter.command);
  }
  if (filter.status !== undefined) {
    where.push('status = ?');
    params.push(filter.status);
  }
  const sql = `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, rowid DESC LIMIT ?`;
  return (db.prepare(sql).all(...params, limit) as RunRow[]).map(fromRow);
}

/** One run by id, or null. */
export function getRun(db: Db, id: string): RunRecord | null {
  settleOrphanedRuns(db);
  const r = db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  return r ? fromRow(r) : null;
}
