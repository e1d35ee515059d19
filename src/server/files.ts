import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { detectFileKind, type FileKind as RecordKind } from '../core/file-kind.js';
import { recordedSettings } from '../jobs/settings.js';
import { openServedFile, type ServedFile } from './safe-open.js';
import { isSimulatedRecord } from './summary.js';

/**
 * The output files the web view may read: JSON and JSONL files below configured folders, and
 * nothing else. Every file is opened with {@link openOutput} (src/server/safe-open.ts: open
 * first, then check the descriptor, then read from it) and is the file at its path below one of
 * the roots with no symlink on the way, or it does not exist as far as the server is concerned.
 * A folder served by
 * mistake (a home folder) holds credentials in hidden folders (`.docker/config.json`,
 * `.config/gcloud/…`) and packages in `node_modules`: no path part may be hidden or
 * `node_modules`, and only the output kinds the UI shows are served.
 */

/** File endings of the outputs the web view shows; everything else does not exist for it. */
export const SERVED_EXTENSIONS: readonly string[] = ['.json', '.jsonl'];

/**
 * Largest JSON document the web view parses whole (reports are a few KiB). JSONL files of any
 * size are indexed and paged instead (jsonl-index.ts).
 */
export const MAX_JSON_BYTES = 64 << 20;
/** A JSON document larger than this is listed from its first bytes, not parsed on every listing. */
const LIST_PARSE_BYTES = 4 << 20;

/** A path part that is hidden (`.docker`, `.env`) or a package folder: never served. */
function isPrivatePart(part: string): boolean {
  // Lower-cased: on a case-insensitive disk (macOS, Windows) `Node_Modules` is the package folder.
  return part.startsWith('.') || part.toLowerCase() === 'node_modules';
}

/** Whether a relative path (either separator) names a servable output: no private part, a served ending. */
export function isServablePath(rel: string): boolean {
  const parts = rel.split(/[\\/]+/).filter((p) => p !== '');
  if (parts.length === 0 || parts.some(isPrivatePart)) return false;
  const name = parts[parts.length - 1];
  return SERVED_EXTENSIONS.some((ext) => name.endsWith(ext) && name.length > ext.length);
}

/** What a file holds, guessed from its first record. */
export type FileKind =
  | 'samples'
  | 'labels'
  | 'search'
  | 'processbench-report'
  | 'predictions'
  | 'accuracy-vs-compute'
  | 'demo-report'
  | 'eval-chunks'
  | 'chunk-judgments'
  | 'selection'
  | 'problems'
  | 'processbench-set'
  | 'json'
  | 'jsonl';

export interface FileEntry {
  root: number;
  /** Path relative to its root, with `/` separators. */
  path: string;
  kind: FileKind;
  /** The file says it is simulated (its own flag, a sim judge/policy spec, or sim-world ids). */
  simulated: boolean;
  /** Its first record says stepwise wrote it (a job's settings record, the demo's report). */
  byStepwise: boolean;
  size: number;
  mtime: string;
}

const MAX_DEPTH = 4;
const MAX_FILES = 2000;

/**
 * Open the output `rel` (a relative path, `/`-separated) below `root`, or null when it is not one
 * (see src/server/safe-open.ts). Every read of an output goes through the file this returns: the
 * check is made on the open descriptor, so a folder swapped for a symlink after the check cannot
 * redirect the read. Close it when done.
 */
export function openOutput(root: string, rel: string): ServedFile | null {
  return openServedFile(root, rel, isServablePath);
}

/** The real path of the output `rel` below `root` (what identifies it), null when it is not one. */
export function safeResolve(root: string, rel: string): string | null {
  const file = openOutput(root, rel);
  if (!file) return null;
  file.close();
  return file.realPath;
}

/** A ProcessBench-format row: `{id, problem, steps: string[], label}`. */
function isProcessBenchRow(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.steps) && typeof v.label === 'number' && typeof v.problem === 'string';
}

/** Guess a record's kind from its shape. */
export function kindOfRecord(value: unknown, jsonl: boolean): FileKind {
  if (!jsonl && Array.isArray(value)) {
    return value.length > 0 && isProcessBenchRow(value[0]) ? 'processbench-set' : 'json';
  }
  if (typeof value !== 'object' || value === null) return jsonl ? 'jsonl' : 'json';
  const v = value as Record<string, unknown>;
  if (!jsonl) {
    if (v.subsets && 'average_f1' in v) return 'processbench-report';
    if (Array.isArray(v.series) || Array.isArray(v.points)) return 'accuracy-vs-compute';
    if (v.kind === 'stepwise-demo' || v.demo === true) return 'demo-report';
    if ('balancedAccuracy' in v || 'balanced_accuracy' in v) return 'eval-chunks';
    // `stepwise solve --json > file.json`: one search result.
    if (detectFileKind(v) === 'search') return 'search';
    return 'json';
  }
  const kind = detectFileKind(v);
  return (kind && VIEW_OF_KIND[kind]?.(v)) ?? 'jsonl';
}

/**
 * How the web view shows each kind of JSONL record that stepwise knows (src/core/file-kind.ts
 * tells them apart, for the commands and here alike); kinds with no view of their own are plain
 * `jsonl`. Data-set rows (problems, solutions, texts) are shown as problems when they carry a
 * question and its answer.
 */
const VIEW_OF_KIND: Partial<Record<RecordKind, (v: Record<string, unknown>) => FileKind>> = {
  sample: () => 'samples',
  label: (v) => (isObject(v.firstError) ? 'labels' : 'jsonl'),
  search: () => 'search',
  predictions: () => 'predictions',
  'chunk-judgments': () => 'chunk-judgments',
  select: (v) => (Array.isArray(v.candidates) ? 'selection' : 'jsonl'),
  processbench: (v) => (isProcessBenchRow(v) ? 'processbench-set' : 'jsonl'),
  problems: problemsView,
  solutions: problemsView,
  texts: problemsView,
};

function problemsView(v: Record<string, unknown>): FileKind {
  return typeof v.id === 'string' &&
    (typeof v.question === 'string' || typeof v.problem === 'string') &&
    'answer' in v
    ? 'problems'
    : 'jsonl';
}

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a record says stepwise wrote it: a job's settings record (`job: {command, hash,
 * settings}`, on every row a job writes) or the demo's report. Data sets (problems, ProcessBench
 * sets) and other tools' JSON have neither, whatever their shape.
 */
export function isStepwiseRecord(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && isStepwiseRecord(value[0]);
  if (typeof value !== 'object' || value === null) return false;
  if ((value as { kind?: unknown }).kind === 'stepwise-demo') return true;
  return recordedSettings(value) !== undefined;
}

/** What {@link inspectFile} says of a file. */
export interface FileFacts {
  kind: FileKind;
  simulated: boolean;
  byStepwise: boolean;
  /**
   * Why `GET /api/file` refuses it, null when it serves it: `too-large` (a JSON document over
   * `MAX_JSON_BYTES`, answered 413) or `not-json` (a `.json` file that does not parse, answered
   * like a missing file). The listing leaves out every file with a refusal, so it shows exactly
   * what opens.
   */
  refusal: 'too-large' | 'not-json' | null;
}

/**
 * The kind of an opened JSON / JSONL file, whether it says it is simulated, whether stepwise
 * wrote it (see {@link isStepwiseRecord}), from its first record; and whether `/api/file` serves it.
 */
export function inspectFile(file: ServedFile, options: { listing?: boolean } = {}): FileFacts {
  const jsonl = file.realRel.endsWith('.jsonl');
  // The facts depend on the file's content only: kept per version (path, size, mtime), so a
  // listing or a page does not read the file again until it changes.
  const key = `${file.realPath}\0${file.size}\0${file.mtimeMs}\0${options.listing && !jsonl && file.size > LIST_PARSE_BYTES}`;
  const known = inspected.get(key);
  if (known) return known;
  const facts = inspectUncached(file, jsonl, options.listing === true);
  if (inspected.size >= 4096) inspected.clear();
  inspected.set(key, facts);
  return facts;
}
const inspected = new Map<string, FileFacts>();

function inspectUncached(file: ServedFile, jsonl: boolean, listing: boolean): FileFacts {
  const fallback = { kind: (jsonl ? 'jsonl' : 'json') as FileKind, simulated: false, byStepwise: false };
  if (!jsonl && file.size > MAX_JSON_BYTES) return { ...fallback, refusal: 'too-large' };
  if (!jsonl && listing && file.size > LIST_PARSE_BYTES) {
    // A large JSON document is listed, not parsed: what it is shows when it is opened.
    return { ...fallback, refusal: null };
  }
  let first: unknown;
  try {
    // A JSONL file's first record: its first line (only that is read, whatever the file's size).
    if (jsonl) first = JSON.parse(file.readText(Math.min(file.size, 1 << 20)).split('\n')[0]);
    else first = JSON.parse(file.readText());
  } catch {
    // A JSONL file whose first line does not parse still opens (its bad lines are reported).
    return { ...fallback, refusal: jsonl ? null : 'not-json' };
  }
  return {
    kind: kindOfRecord(first, jsonl),
    simulated: isSimulatedRecord(first),
    byStepwise: isStepwiseRecord(first),
    refusal: null,
  };
}

/**
 * Every JSON/JSONL file below the roots that `GET /api/file` opens (bounded depth and count;
 * hidden folders, node_modules and symlinks skipped): each is opened as `/api/file` opens it
 * ({@link openOutput}) and left out when that fails or `/api/file` would refuse it.
 */
export function listFiles(roots: readonly string[]): FileEntry[] {
  const out: FileEntry[] = [];
  roots.forEach((root, index) => {
    const walk = (dir: string, rel: string, depth: number) => {
      if (depth > MAX_DEPTH || out.length >= MAX_FILES) return;
      let entries: import('node:fs').Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (out.length >= MAX_FILES) return;
        if (isPrivatePart(e.name)) continue;
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(join(dir, e.name), path, depth + 1);
        else if (e.isFile() && isServablePath(e.name)) {
          const file = openOutput(root, path);
          if (!file) continue;
          try {
            const { refusal, ...facts } = inspectFile(file, { listing: true });
            if (refusal === null)
              out.push({
                root: index,
                path,
                ...facts,
                size: file.size,
                mtime: new Date(file.mtimeMs).toISOString(),
              });
          } finally {
            file.close();
          }
        }
      }
    };
    walk(root, '', 0);
  });
  return out;
}
