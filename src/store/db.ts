import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';

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
];

const opened = new Map<string, Db>();

/** Open (and migrate) the store at `path`; one handle per path per process. `:memory:` for tests. */
export function openStore(path: string = defaultStorePath()): Db {
  const existing = opened.get(path);
  if (existing?.open) return existing;
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  migrate(db);
  if (path !== ':memory:') opened.set(path, db);
  return db;
}

function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/** Schema version after migrations. */
export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}
