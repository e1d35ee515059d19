import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StepwiseError } from '../../src/core/errors.js';
import {
  finishRun,
  getRun,
  latestSchemaVersion,
  listRuns,
  migrateStore,
  openStore,
  schemaVersion,
  startRun,
  updateRunCounts,
} from '../../src/store/index.js';
import { tempDir } from '../support/temp.js';

const tempStore = () => join(tempDir('stepwise-store-'), 'store.sqlite');

describe('store migrations', () => {
  it('a new store is migrated to the latest version, in WAL mode, with runs and cache tables', () => {
    const db = openStore(tempStore());
    expect(schemaVersion(db)).toBe(latestSchemaVersion());
    expect(latestSchemaVersion()).toBeGreaterThanOrEqual(1);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
    ).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['runs', 'cache']));
  });

  it('applies only the migrations a store has not seen, once each, and keeps its data', () => {
    const db = new Database(':memory:');
    const v1 = ['CREATE TABLE a (x INTEGER);'];
    migrateStore(db, v1);
    db.prepare('INSERT INTO a VALUES (7)').run();
    expect(schemaVersion(db)).toBe(1);
    migrateStore(db, v1); // reopening runs nothing again (CREATE TABLE would fail)
    const v2 = [...v1, 'ALTER TABLE a ADD COLUMN y TEXT;', 'CREATE TABLE b (z TEXT);'];
    migrateStore(db, v2);
    expect(schemaVersion(db)).toBe(3);
    expect(db.prepare('SELECT x, y FROM a').all()).toEqual([{ x: 7, y: null }]);
  });

  it('a failing migration rolls back entirely and leaves the version unchanged', () => {
    const db = new Database(':memory:');
    expect(() => migrateStore(db, ['CREATE TABLE a (x INTEGER); CREATE TABLE a (y INTEGER);'])).toThrow();
    expect(schemaVersion(db)).toBe(0);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'a'").get()).toEqual({ n: 0 });
  });

  it('refuses a store from a newer stepwise and a file that is not a database', () => {
    const db = new Database(':memory:');
    db.pragma('user_version = 5');
    expect(() => migrateStore(db, ['SELECT 1;'])).toThrow(/newer than this stepwise knows/);
    const junk = tempStore();
    writeFileSync(junk, 'this is not sqlite, just text that is long enough to have a header..........');
    let err: unknown;
    try {
      openStore(junk);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StepwiseError);
    expect((err as StepwiseError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/not a usable stepwise store/);
  });

  it('two handles on one new file (as two processes would) both see one migrated schema', () => {
    const path = tempStore();
    const a = new Database(path);
    const b = new Database(path);
    migrateStore(a);
    migrateStore(b);
    expect([schemaVersion(a), schemaVersion(b)]).toEqual([latestSchemaVersion(), latestSchemaVersion()]);
  });
});

describe('runs', () => {
  it('records start, counts, finish; lists newest first with filters', () => {
    const db = openStore(tempStore());
    const first = startRun(db, 'label', { m: 16 }, 'out.jsonl');
    updateRunCounts(db, first, { done: 3 });
    updateRunCounts(db, first, { failed: 1 });
    finishRun(db, first, 'done', { done: 10 });
    const second = startRun(db, 'search', { n: 8 });
    expect(getRun(db, first)).toMatchObject({
      command: 'label',
      config: { m: 16 },
      status: 'done',
      counts: { done: 10, failed: 1 },
      // Relative output paths are stored absolute.
      output: resolve('out.jsonl'),
    });
    expect(getRun(db, first)?.endedAt).not.toBeNull();
    expect(getRun(db, second)).toMatchObject({ status: 'running', endedAt: null, output: null, counts: {} });
    expect(listRuns(db).map((r) => r.id)).toEqual([second, first]);
    expect(listRuns(db, 1).map((r) => r.id)).toEqual([second]);
    expect(listRuns(db, 10, { command: 'label' }).map((r) => r.id)).toEqual([first]);
    expect(listRuns(db, 10, { status: 'running' }).map((r) => r.id)).toEqual([second]);
    expect(getRun(db, 'nope')).toBeNull();
  });
});
