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

/** `key` without a trailing `#<k>` (the sample index `stepwise label` adds to sample inputs). */
function baseOf(key: string): string {
  const m = /^(.*)#(\d+)$/.exec(key);
  return m ? m[1] : key;
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
  const fds = o.files.map((f) => {
    if (!existsSync(f)) throw new InputError({ file: f }, 'file not found');
    return openSync(f, 'r');
  });
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
        if (typeof key !== 'string' && typeof key !== 'number')
          throw new InputError({ file, line: l.line, field: keyField }, 'missing record key');
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
        // Keys by input id: `id` itself, then `id#0`, `id#1`, … (one per sample).
        const byBase = new Map<string, string[]>();
        for (const k of order) {
          const b = baseOf(k);
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
            .sort((a, b) => Number(/#(\d+)$/.exec(a)?.[1] ?? -1) - Number(/#(\d+)$/.exec(b)?.[1] ?? -1));
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
    for (const fd of fds) closeSync(fd);
  }
  return summary;
}
