import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { recordedSettings } from '../jobs/settings.js';
import { isSimulatedRecord } from './summary.js';

/**
 * The output files the web view may read: JSON and JSONL files below configured folders, and
 * nothing else. Every path from a request is resolved (symlinks included) and must stay inside
 * one of the roots, or it does not exist as far as the server is concerned. A folder served by
 * mistake (a home folder) holds credentials in hidden folders (`.docker/config.json`,
 * `.config/gcloud/…`) and packages in `node_modules`: no path part may be hidden or
 * `node_modules`, and only the output kinds the UI shows are served.
 */

/** File endings of the outputs the web view shows; everything else does not exist for it. */
export const SERVED_EXTENSIONS: readonly string[] = ['.json', '.jsonl'];

/** Largest file the web view reads (JSON, JSONL pages and summaries alike). */
export const MAX_SHOWN_BYTES = 64 << 20;

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
 * Resolve `rel` under `root`; null when it escapes the root, does not exist, is not a regular
 * file, or is not a servable output (see `isServablePath`) as asked or once symlinks are resolved.
 */
export function safeResolve(root: string, rel: string): string | null {
  if (typeof rel !== 'string' || rel === '' || rel.includes('\0') || isAbsolute(rel)) return null;
  if (!isServablePath(rel)) return null;
  try {
    const realRoot = realpathSync(root);
    const real = realpathSync(resolve(realRoot, rel));
    const r = relative(realRoot, real);
    if (r === '' || r.startsWith('..') || isAbsolute(r) || !isServablePath(r)) return null;
    if (!statSync(real).isFile()) return null;
    return real;
  } catch {
    return null;
  }
}

/** Read at most `max` bytes from the start of a file. */
function head(path: string, max: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
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
    if (typeof v.strategy === 'string' && Array.isArray(v.chunks) && 'finalText' in v) return 'search';
    return 'json';
  }
  if (Array.isArray(v.samples)) return 'samples';
  if (typeof v.strategy === 'string' && Array.isArray(v.chunks) && 'finalText' in v) return 'search';
  if (v.result && typeof v.result === 'object' && Array.isArray((v.result as Record<string, unknown>).trace))
    return 'search';
  if (Array.isArray(v.chunks) && v.firstError && typeof v.firstError === 'object') return 'labels';
  if ('prediction' in v && 'id' in v) return 'predictions';
  // `eval chunks` per-chunk rows (judge verdict beside the rollout label and Q̂).
  if (typeof v.solution === 'string' && typeof v.chunk === 'number' && 'verdict' in v && 'label' in v)
    return 'chunk-judgments';
  // `stepwise select`: the judge's pick and the outcome-only pick of each problem.
  if ('chosen' in v && 'outcomeOnly' in v && Array.isArray(v.candidates)) return 'selection';
  if (isProcessBenchRow(v)) return 'processbench-set';
  if (
    typeof v.id === 'string' &&
    (typeof v.question === 'string' || typeof v.problem === 'string') &&
    'answer' in v
  )
    return 'problems';
  return 'jsonl';
}

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

/**
 * The kind of a JSON / JSONL file, whether it says it is simulated, and whether stepwise wrote it
 * (see {@link isStepwiseRecord}), from its first record.
 */
export function inspectFile(path: string): { kind: FileKind; simulated: boolean; byStepwise: boolean } {
  const jsonl = path.endsWith('.jsonl');
  try {
    let first: unknown;
    if (jsonl) first = JSON.parse(head(path, 1 << 20).split('\n')[0]);
    else if (statSync(path).size > 64 << 20) return { kind: 'json', simulated: false, byStepwise: false };
    else first = JSON.parse(readFileSync(path, 'utf8'));
    return {
      kind: kindOfRecord(first, jsonl),
      simulated: isSimulatedRecord(first),
      byStepwise: isStepwiseRecord(first),
    };
  } catch {
    return { kind: jsonl ? 'jsonl' : 'json', simulated: false, byStepwise: false };
  }
}

/** The kind of a JSON / JSONL file, from its first record. */
export function kindOfFile(path: string): FileKind {
  return inspectFile(path).kind;
}

/** Every JSON/JSONL file below the roots (bounded depth and count; hidden folders and node_modules skipped). */
export function listFiles(roots: readonly string[]): FileEntry[] {
  const out: FileEntry[] = [];
  roots.forEach((root, index) => {
    const walk = (dir: string, depth: number) => {
      if (depth > MAX_DEPTH || out.length >= MAX_FILES) return;
      let entries: import('node:fs').Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (isPrivatePart(e.name)) continue;
        const full = join(dir, e.name);
        if (e.isDirectory()) walk(full, depth + 1);
        else if (e.isFile() && isServablePath(e.name)) {
          const st = statSync(full);
          out.push({
            root: index,
            path: relative(root, full).split(sep).join('/'),
            ...inspectFile(full),
            size: st.size,
            mtime: st.mtime.toISOString(),
          });
        }
      }
    };
    walk(root, 0);
  });
  return out;
}

/**
 * Records of a JSONL file from `offset` (at most `limit`), and the total; lines that do not parse
 * are reported, not thrown. With `id`, the page starts at the first record whose `id` is that
 * (offset is then where it was found, or -1 when no record has it).
 */
export function readJsonlPage(
  path: string,
  offset: number,
  limit: number,
  id?: string,
): { total: number; offset: number; records: unknown[]; badLines: number[] } {
  const lines = readFileSync(path, 'utf8').split('\n');
  if (id !== undefined) {
    offset = -1;
    let index = 0;
    const needle = JSON.stringify(id);
    for (const line of lines) {
      if (line.trim() === '') continue;
      // Cheap test first: only lines that contain the quoted id are parsed.
      if (line.includes(needle)) {
        try {
          if ((JSON.parse(line) as { id?: unknown }).id === id) {
            offset = index;
            break;
          }
        } catch {}
      }
      index++;
    }
  }
  const records: unknown[] = [];
  const badLines: number[] = [];
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    if (offset >= 0 && total >= offset && records.length < limit) {
      try {
        records.push(JSON.parse(lines[i]));
      } catch {
        badLines.push(i + 1);
      }
    }
    total++;
  }
  return { total, offset, records, badLines };
}

/** Every record of a JSONL file (lines that do not parse are skipped). */
export function readJsonlAll(path: string): unknown[] {
  const out: unknown[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch {}
  }
  return out;
}
