import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { InputError, StepwiseError, UsageError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES, type FileKind } from '../core/file-kind.js';
import { jsonArrayError, readLinesSync, streamJsonl } from './lines.js';
import { type JobSettings, recordedSettings, recordedShard, type Shard } from './settings.js';

export interface MergeOptions {
  files: readonly string[];
  out: string;
  /** The job's input: the output follows its order (its records' `id`). */
  input?: string;
  /** Field holding a record's key (default `id`). */
  keyField?: string;
  /**
   * Write the merged file even when records of the input are missing (default: refuse, exit 1,
   * naming how many and which: a merge of 2 of 3 shards is not the job's output). Only the
   * outputs of jobs (rows that record their settings) are refused; export rows are a selection
   * of their input, so a record without one is counted, not refused.
   */
  allowMissing?: boolean;
}

export interface MergeSummary {
  files: number;
  records: number;
  /** Lines whose key was already taken from an earlier file or line (identical content). */
  duplicates: number;
  /** Duplicates whose content differed from the record kept (the first one is kept). */
  conflicts: number;
  /**
   * With `input`: records the input calls for that no file holds (e.g. a shard that did not
   * finish), counted in the unit the files hold — one per solution `<id>#<k>` of a sample row
   * when the files hold solutions, else one per input row.
   */
  missing: number;
  /** What `missing` counts: `solutions` (keys `<id>#<k>` of sample rows) or `rows` (input ids). */
  missingUnit: 'solutions' | 'rows';
  /** Records the input calls for (in the unit of `missing`). */
  expected: number;
  /** Input rows with at least one missing record. */
  missingInputRows: number;
  /** The first missing keys (at most 10), to find the part that did not finish. */
  missingKeys: string[];
  /** With `input`: records whose key is not in the input (written last). */
  notInInput: number;
  /**
   * Without `input`: the parts of a job written with `--shard K/N` (rows recording `job.shard`)
   * that no file holds, per job (command and settings hash). Any exits 1 unless `allowMissing`.
   */
  missingShards: Array<{ command: string; hash: string; index: number; count: number }>;
  /** Without `input`: jobs whose rows record their shard (their completeness was checked). */
  shardedJobs: number;
  /**
   * Without `input`: files with rows that record no shard (unsharded outputs, rows written before
   * rows recorded it, export rows), whose completeness cannot be checked without `input`.
   */
  uncheckedFiles: string[];
  /** Files that hold no record (a shard whose part of the input was empty looks like this). */
  emptyFiles: string[];
  out: string;
}

/** Where one kept record lives. */
interface Slot {
  file: number;
  offset: number;
  length: number;
  placed: boolean;
  /** The row records `job.shard` (dropped from the merge when it is the whole job). */
  sharded: boolean;
}

/** The parts of one job (command and settings hash) the files hold. */
interface JobParts {
  command: string;
  hash: string;
  /** Shard count N → the parts K seen. */
  shards: Map<number, Set<number>>;
  /** Some rows of this job record no shard: its parts cannot be told apart. */
  unsharded: boolean;
}

/** `rec` without `job.shard`, its fields in the same order: what the unsharded job writes. */
function withoutShard(rec: Record<string, unknown>): Record<string, unknown> {
  const { shard: _shard, ...job } = rec.job as Record<string, unknown>;
  return { ...rec, job };
}

/** `shard 3/3 of label (hash …) is missing`, or `shards 2/3, 3/3 of … are missing`, per job. */
export function missingShardsPhrase(missing: MergeSummary['missingShards']): string {
  const byJob = new Map<string, { command: string; hash: string; parts: string[] }>();
  for (const m of missing) {
    const key = `${m.command}\u0000${m.hash}`;
    const job = byJob.get(key) ?? { command: m.command, hash: m.hash, parts: [] };
    job.parts.push(`${m.index}/${m.count}`);
    byJob.set(key, job);
  }
  return [...byJob.values()]
    .map(
      (j) =>
        `${j.parts.length === 1 ? 'shard' : 'shards'} ${j.parts.join(', ')} of ${j.command} (hash ${j.hash}) ${j.parts.length === 1 ? 'is' : 'are'} missing`,
    )
    .join('; ');
}

/**
 * A key's input id and its place among that id's records: `<id>#<k>` (a sample of a `stepwise
 * sample` row), `<id>/<i>` (an `export --task judge-rl` row: chunk i of solution id), `<id>@<k>`
 * (an `export --task sorm` row: the prefix of k chunks).
 */
const SUB_KEY = /^(.*)[#/@](\d+)$/;

/** `key` without a trailing sub-key (see {@link SUB_KEY}). */
function baseOf(key: string): string {
  const m = SUB_KEY.exec(key);
  return m ? m[1] : key;
}

const subIndexOf = (key: string): number => Number(SUB_KEY.exec(key)?.[2] ?? -1);

/** Parquet files begin with these four bytes. */
const PARQUET_MAGIC = Buffer.from('PAR1');

/** Refuse a file merge cannot join, saying what to do with it instead. */
function refuseUnmergeable(file: string, fd: number): void {
  const head = Buffer.alloc(4);
  readSync(fd, head, 0, 4, 0);
  if (head.equals(PARQUET_MAGIC))
    throw new UsageError(
      `${file} is a Parquet file (\`export --format verl\`): merge joins JSONL. The parts of a sharded ` +
        'export never overlap, so give verl all of them as one data set: data.train_files=[part-1.parquet, …]',
    );
}

/**
 * Join JSONL outputs of one job (its shards, or reruns) into one file: each key once, in the
 * input's order when the input is given (else in file order). Only keys and offsets are held in
 * memory; records are copied from their files. The output is written to a temporary file and
 * renamed, so `out` may be one of the inputs.
 */
export function mergeJsonl(o: MergeOptions): MergeSummary {
  if (o.files.length === 0) throw new UsageError('merge: name at least one file to merge');
  const keyField = o.keyField ?? 'id';
  const slots = new Map<string, Slot>();
  const order: string[] = [];
  const summary: MergeSummary = {
    files: o.files.length,
    records: 0,
    duplicates: 0,
    conflicts: 0,
    missing: 0,
    missingUnit: 'rows',
    expected: 0,
    missingInputRows: 0,
    missingKeys: [],
    notInInput: 0,
    missingShards: [],
    shardedJobs: 0,
    uncheckedFiles: [],
    emptyFiles: [],
    out: o.out,
  };
  const jobs = new Map<string, JobParts>();
  const unchecked = new Set<number>();
  /** Notes the part of a job a row came from (without `input`, where shards are checked). */
  const noteShard = (fi: number, job: JobSettings | undefined, shard: Shard | undefined) => {
    if (!shard) unchecked.add(fi);
    if (!job) return;
    const key = `${job.command}\u0000${job.hash}`;
    let parts = jobs.get(key);
    if (!parts) {
      parts = { command: job.command, hash: job.hash, shards: new Map(), unsharded: false };
      jobs.set(key, parts);
    }
    if (!shard) {
      parts.unsharded = true;
      return;
    }
    const seen = parts.shards.get(shard.count);
    if (seen) seen.add(shard.index);
    else parts.shards.set(shard.count, new Set([shard.index]));
  };
  const noteMissing = (keys: string[]) => {
    summary.missing += keys.length;
    summary.missingInputRows++;
    for (const k of keys) if (summary.missingKeys.length < 10) summary.missingKeys.push(k);
  };
  const fds: number[] = [];
  const closeAll = () => {
    for (const fd of fds) closeSync(fd);
  };
  try {
    for (const f of o.files) {
      if (!existsSync(f)) throw new InputError({ file: f }, 'file not found');
      fds.push(openSync(f, 'r'));
      refuseUnmergeable(f, fds[fds.length - 1]);
    }
  } catch (e) {
    closeAll();
    throw e;
  }
  const read = (s: Slot): Buffer => {
    const buf = Buffer.allocUnsafe(s.length);
    readSync(fds[s.file], buf, 0, s.length, s.offset);
    return buf;
  };
  /** The bytes of a row as the merge writes them (`strip`: without `job.shard`). */
  const rowOf = (s: Slot, strip: boolean): Buffer => {
    const buf = read(s);
    if (!strip || !s.sharded) return buf;
    return Buffer.from(JSON.stringify(withoutShard(JSON.parse(buf.toString('utf8')))), 'utf8');
  };
  let firstKind: { kind: FileKind; file: string } | undefined;
  let jobRowsOnly = true;
  try {
    o.files.forEach((file, fi) => {
      let rows = 0;
      for (const l of readLinesSync(file)) {
        if (l.text.trim() === '') continue;
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(l.text) as Record<string, unknown>;
        } catch (e) {
          // A torn last line of an interrupted shard is not a record; anything else is an error.
          if (l.partial) continue;
          if (l.text.trim().startsWith('[')) throw jsonArrayError(file);
          throw new InputError({ file, line: l.line }, `not valid JSON (${(e as Error).message})`);
        }
        // The files are parts of one job: a file of another kind was given by mistake.
        const kind = detectFileKind(rec);
        if (kind !== undefined) {
          if (firstKind === undefined) firstKind = { kind, file };
          else if (kind !== firstKind.kind)
            throw new InputError(
              { file, line: l.line },
              `this is ${FILE_KIND_NAMES[kind]}; merging ${firstKind.file} (${FILE_KIND_NAMES[firstKind.kind]}) needs files of that kind`,
            );
        }
        const key = rec?.[keyField];
        if (typeof key !== 'string' && typeof key !== 'number') {
          // Math-Shepherd rows ({input, label, task}) carry no id: nothing to join by.
          if (keyField === 'id' && typeof rec?.input === 'string' && typeof rec?.task === 'string')
            throw new InputError(
              { file, line: l.line, field: keyField },
              'a Math-Shepherd row (`export --format mathshepherd`) has no id to merge by; the parts of a ' +
                'sharded export never overlap, so concatenate them (cat part-*.jsonl > all.jsonl)',
            );
          throw new InputError({ file, line: l.line, field: keyField }, 'missing record key');
        }
        // Rows a job wrote record its settings: such a job owes one row per input record.
        const job = recordedSettings(rec);
        if (job === undefined) jobRowsOnly = false;
        const shard = recordedShard(rec, (message) => {
          throw new InputError({ file, line: l.line, field: 'job.shard' }, message);
        });
        if (!o.input) noteShard(fi, job, shard);
        rows++;
        const k = String(key);
        const kept = slots.get(k);
        const slot = {
          file: fi,
          offset: l.offset,
          length: l.length,
          placed: false,
          sharded: shard !== undefined,
        };
        if (kept) {
          summary.duplicates++;
          // Two parts of the same row (e.g. of a 2-way and a 3-way run) differ in their shard only.
          const same =
            read(kept).equals(Buffer.from(l.text, 'utf8')) ||
            ((kept.sharded || slot.sharded) && rowOf(kept, true).equals(rowOf(slot, true)));
          if (!same) summary.conflicts++;
          continue;
        }
        slots.set(k, slot);
        order.push(k);
      }
      if (rows === 0) summary.emptyFiles.push(file);
    });
    summary.records = slots.size;
    // Without the input, the rows that record their shard say which parts of their job are here:
    // a job whose parts of some count N are not all of 1..N is missing a part.
    for (const parts of jobs.values()) {
      if (parts.shards.size === 0) continue;
      summary.shardedJobs++;
      // Rows without a shard may be any part: such a job cannot be checked (it is in uncheckedFiles).
      if (parts.unsharded) continue;
      if ([...parts.shards].some(([count, seen]) => seen.size === count)) continue;
      for (const [count, seen] of [...parts.shards].sort((a, b) => a[0] - b[0]))
        for (let index = 1; index <= count; index++)
          if (!seen.has(index))
            summary.missingShards.push({ command: parts.command, hash: parts.hash, index, count });
    }
    summary.uncheckedFiles = [...unchecked].sort((a, b) => a - b).map((fi) => o.files[fi]);
    if (summary.missingShards.length > 0 && !o.allowMissing) {
      const empty =
        summary.emptyFiles.length > 0
          ? ` (${summary.emptyFiles.join(', ')} ${summary.emptyFiles.length === 1 ? 'holds' : 'hold'} no rows: a part whose share of the input was empty looks like that)`
          : '';
      throw new StepwiseError(
        `merge: ${missingShardsPhrase(summary.missingShards)}: pass ${summary.missingShards.length === 1 ? 'it' : 'them'}, or --input to count the missing rows, or --allow-missing${empty}. Nothing written to ${o.out}`,
        { exitCode: 1 },
      );
    }
    /** Keys in the order they are written. */
    const sequence: string[] = [];
    {
      const write = (k: string) => {
        slots.get(k)!.placed = true;
        sequence.push(k);
      };
      if (o.input) {
        // Keys by input id: `id` itself, then its sub-keys `id#0`, `id#1`, … in order (see SUB_KEY).
        // A key that is an input id of its own (`X/3` beside `X`) is no sub-key: it keeps its place.
        const inputIds = new Set<string>();
        for (const { value } of streamJsonl(o.input)) {
          const id = (value as Record<string, unknown> | null)?.id;
          if (typeof id === 'string' || typeof id === 'number') inputIds.add(String(id));
        }
        // Files of solutions (`<id>#<k>`, e.g. label over sample output) owe one record per sample
        // of an input row; files of rows (sample, select, search) one per input id.
        const perSolution = order.some((k) => !inputIds.has(k) && /#\d+$/.test(k));
        summary.missingUnit = perSolution ? 'solutions' : 'rows';
        const byBase = new Map<string, string[]>();
        for (const k of order) {
          const b = inputIds.has(k) ? k : baseOf(k);
          const list = byBase.get(b);
          if (list) list.push(k);
          else byBase.set(b, [k]);
        }
        for (const { line, value } of streamJsonl(o.input)) {
          const id = (value as Record<string, unknown> | null)?.id;
          if (typeof id !== 'string' && typeof id !== 'number')
            throw new InputError({ file: o.input, line, field: 'id' }, 'missing id');
          const ks = byBase.get(String(id));
          const own = slots.get(String(id));
          const samples = (value as { samples?: unknown }).samples;
          if (perSolution && Array.isArray(samples)) {
            const keys = samples.map((_, k) => `${id}#${k}`);
            summary.expected += keys.length;
            const absent = keys.filter((k) => !slots.has(k));
            if (absent.length > 0) noteMissing(absent);
          } else {
            summary.expected++;
            if (!ks && !own) noteMissing([String(id)]);
          }
          if (!ks && !own) continue;
          if (own && !own.placed) write(String(id));
          const rest = (ks ?? [])
            .filter((k) => !slots.get(k)!.placed)
            .sort((a, b) => subIndexOf(a) - subIndexOf(b));
          for (const k of rest) write(k);
        }
      }
      for (const k of order)
        if (!slots.get(k)!.placed) {
          if (o.input) summary.notInInput++;
          write(k);
        }
    }
    // Export rows are a selection (unlabeled chunks, balancing): an input record without one is
    // not missing work, so only the outputs of jobs (rows with settings) must be complete.
    if (summary.missing > 0 && !o.allowMissing && jobRowsOnly) {
      throw new StepwiseError(
        `merge: ${summary.missing} of ${summary.expected} ${summary.missingUnit} of ${o.input} have no record in any file ` +
          `(${summary.missingInputRows} input rows affected; first missing: ${summary.missingKeys.join(', ')}): ` +
          `a part did not finish or was not given. Nothing written to ${o.out}; finish the missing part, or pass --allow-missing to write the ${summary.expected - summary.missing} there are`,
        { exitCode: 1 },
      );
    }
    // A merge of the whole job is what the unsharded job writes: its rows lose their shard. A
    // partial merge (--allow-missing) keeps them, so merging it later with the rest is checked.
    const whole = o.input ? summary.missing === 0 : summary.missingShards.length === 0;
    const tmp = `${o.out}.tmp-${process.pid}`;
    const out = openSync(tmp, 'w');
    try {
      for (const k of sequence) {
        writeSync(out, rowOf(slots.get(k)!, whole));
        writeSync(out, '\n');
      }
    } catch (e) {
      closeSync(out);
      rmSync(tmp, { force: true });
      throw e;
    }
    closeSync(out);
    renameSync(tmp, o.out);
  } finally {
    closeAll();
  }
  return summary;
}
