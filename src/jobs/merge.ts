import { closeSync, existsSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { InputError, UsageError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES, type FileKind } from '../core/file-kind.js';
import { readLinesSync, streamJsonl } from './lines.js';

export interface MergeOptions {
  files: readonly string[];
  out: string;
  /** The job's input: the output follows its order (its records' `id`). */
  input?: string;
  /** Field holding a record's key (default `id`). */
  keyField?: string;
}

export interface MergeSummary {
  files: number;
  records: number;
  /** Lines whose key was already taken from an earlier file or line (identical content). */
  duplicates: number;
  /** Duplicates whose content differed from the record kept (the first one is kept). */
  conflicts: number;
  /** With `input`: input ids with no record in any file (e.g. a shard that did not finish). */
  missing: number;
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
    notInInput: 0,
    out: o.out,
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
          if (!ks && !own) {
            summary.missing++;
            continue;
          }
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
    renameSync(tmp, o.out);
  } finally {
    closeAll();
  }
  return summary;
}
