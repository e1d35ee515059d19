import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { InputError, StepwiseError, UsageError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES, type FileKind } from '../core/file-kind.js';
import { jsonArrayError, readLinesSync, streamJsonl } from './lines.js';
import { recordedSettings } from './settings.js';

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
  out: string;
}

/** Where one kept record lives. */
interface Slot {
  file: number;
  offset: number;
  length: number;
  placed: boolean;
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
    out: o.out,
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
  let firstKind: { kind: FileKind; file: string } | undefined;
  let jobRowsOnly = true;
  try {
    o.files.forEach((file, fi) => {
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
        if (recordedSettings(rec) === undefined) jobRowsOnly = false;
        const k = String(key);
        const kept = slots.get(k);
        if (kept) {
          summary.duplicates++;
          if (!read(kept).equals(Buffer.from(l.text, 'utf8'))) summary.conflicts++;
          continue;
        }
        slots.set(k, { file: fi, offset: l.offset, length: l.length, placed: false });
        order.push(k);
      }
    });
    summary.records = slots.size;
    const tmp = `${o.out}.tmp-${process.pid}`;
    const out = openSync(tmp, 'w');
    try {
      const write = (k: string) => {
        const s = slots.get(k)!;
        s.placed = true;
        writeSync(out, read(s));
        writeSync(out, '\n');
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
    } finally {
      closeSync(out);
    }
    // Export rows are a selection (unlabeled chunks, balancing): an input record without one is
    // not missing work, so only the outputs of jobs (rows with settings) must be complete.
    if (summary.missing > 0 && !o.allowMissing && jobRowsOnly) {
      rmSync(tmp, { force: true });
      throw new StepwiseError(
        `merge: ${summary.missing} of ${summary.expected} ${summary.missingUnit} of ${o.input} have no record in any file ` +
          `(${summary.missingInputRows} input rows affected; first missing: ${summary.missingKeys.join(', ')}): ` +
          `a part did not finish or was not given. Nothing written to ${o.out}; finish the missing part, or pass --allow-missing to write the ${summary.expected - summary.missing} there are`,
        { exitCode: 1 },
      );
    }
    renameSync(tmp, o.out);
  } finally {
    closeAll();
  }
  return summary;
}
