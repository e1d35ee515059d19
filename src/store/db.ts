import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StepwiseError } from '../core/errors.js';

/**
 * The SQLite store (better-sqlite3, WAL): runs, the model-call cache and job state. One file,
 * shared safely by concurrent processes (WAL + busy timeout).
 */
export type Db = Database.Database;

/** Where the store lives: `$STEPWISE_HOME/store.sqlite`, default `./.stepwise/store.sqlite`. */
export function defaultStorePath(): string {
  const home = process.env.STEPWISE_HOME ?? join(process.cwd(), '.stepwise');
  return resolve(home, 'store.sqlite');
}

/** Versioned migrations: index i brings the schema from version i to i + 1. Append only. */
const MIGRATIONS: string[] = [
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     command TEXT NOT NULL,
     config TEXT NOT NULL,
     status TEXT NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     counts TEXT NOT NULL DEFAULT '{}',
     output TEXT
   );
   CREATE TABLE cache (
     key TEXT PRIMARY KEY,
     value TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // The model cache, one row per request: a 16-byte key, the sample count and the samples
  // compressed together (see models/cache.ts). WITHOUT ROWID: the key is stored once.
  `CREATE TABLE samples (
     key BLOB PRIMARY KEY,
     n INTEGER NOT NULL,
     value BLOB NOT NULL
   ) WITHOUT ROWID;`,
  // Which process runs a job (pid, host, the process's start time), so a run whose process was
  // killed outright is found and marked interrupted, with why (end_reason).
  `ALTER TABLE runs ADD COLUMN pid INTEGER;
   ALTER TABLE runs ADD COLUMN host TEXT;
   ALTER TABLE runs ADD COLUMN proc_start TEXT;
   ALTER TABLE runs ADD COLUMN end_reason TEXT;`,
];

const opened = new Map<string, Db>();

/** Open (and migrate) the store at `path`; one handle per path per process. `:memory:` for tests. */
export function openStore(path: string = defaultStorePath()): Db {
  const existing = opened.get(path);
  if (existing?.open) return existing;
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 10000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    migrateStore(db);
  } catch (err) {
    db.close();
    if (err instanceof StepwiseError) throw new StepwiseError(`${path}: ${err.message}`, { exitCode: 2 });
    throw new StepwiseError(`${path}: not a usable stepwise store (${(err as Error).message})`, {
      exitCode: 2,
      cause: err,
    });
  }
  if (path !== ':memory:') {
    opened.set(path, db);
    if (opened.size === 1) process.once('exit', closeStores);
  }
  return db;
}

/**
 * Checkpoint and close every open store: the WAL's pages move into the database file and the
 * WAL is truncated, so a finished job leaves one compact file (also run at process exit).
 */
export function closeStores(): void {
  for (const [path, db] of opened) {
    if (!db.open) continue;
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    } catch {
      // Another process may hold the WAL; it checkpoints when it closes.
    }
    opened.delete(path);
  }
}

/** Bytes the store takes on disk: the database file and its WAL. */
export function storeBytes(path: string): { file: number; wal: number } {
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
  return { file: size(path), wal: size(`${path}-wal`) };
}

/**
 * Bring the schema up to date: apply `migrations[v]` for every version v from the store's
 * `user_version` on, each in its own IMMEDIATE transaction. The version is re-read inside the
 * transaction, so two processes opening a new store at once apply each migration exactly once.
 * A store newer than `migrations` (written by a newer stepwise) is refused.
 */
export function migrateStore(db: Db, migrations: readonly string[] = MIGRATIONS): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() > migrations.length)
    throw new StepwiseError(
      `store schema version ${version()} is newer than this stepwise knows (${migrations.length}); upgrade stepwise`,
    );
  while (version() < migrations.length) {
    db.transaction(() => {
      const v = version();
      if (v >= migrations.length) return;
      db.exec(migrations[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/** The schema version this stepwise migrates stores to (the number of migrations). */
export function latestSchemaVersion(): number {
  return MIGRATIONS.length;
}

/** Schema version after migrations. */
export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}
