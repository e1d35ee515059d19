import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Db } from './db.js';

/**
 * A run is `running` until it finishes as `done` or `failed`, or is stopped by Ctrl-C
 * (`interrupted`). A process killed outright cannot say so: its run stays `running`.
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
  command: string;
  config: Record<string, unknown>;
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  counts: Record<string, number>;
  /** The main output file, when the run writes one. */
  output: string | null;
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
}

function fromRow(r: RunRow): RunRecord {
  return {
    id: r.id,
    command: r.command,
    config: JSON.parse(r.config),
    status: r.status,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    counts: JSON.parse(r.counts),
    output: r.output,
  };
}

/** Record the start of a run; returns its id. */
export function startRun(db: Db, command: string, config: Record<string, unknown>, output?: string): string {
  const id = `${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14)}-${randomUUID().slice(0, 8)}`;
  db.prepare(
    'INSERT INTO runs (id, command, config, status, started_at, counts, output) VALUES (?, ?, ?, ?, ?, ?, ?)',
    // Stored absolute, so the web view can find the file whatever folder it was started from.
  ).run(
    id,
    command,
    JSON.stringify(config),
    'running',
    new Date().toISOString(),
    '{}',
    output ? resolve(output) : null,
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
  const r = db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  return r ? fromRow(r) : null;
}
