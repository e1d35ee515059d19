import { fstatSync, read } from 'node:fs';
import type { FileKind } from './files.js';
import { type SummaryAccumulator, summaryAccumulator } from './summary.js';

/**
 * The index of a JSONL output file: where each record starts and ends in the file, and the few
 * fields the web view's filters need, in typed arrays (a few dozen bytes a record, never the
 * records). The file is read once, a window of a few MiB at a time, with the event loop free
 * between windows; pages are then read from the offsets, so a page of a 300 MB file costs what a
 * page of a small one does. The index is rebuilt when the file is another file (device, inode) or
 * shrank, and extended when it grew (a running job appending its output).
 */

/** Bytes read per step of a build or a text search: the memory a file costs while it is read. */
const WINDOW = 4 << 20;
/** A longer line is a bad record: never parsed, never sent. */
export const MAX_LINE_BYTES = 64 << 20;
/** A last line without its newline counts as a record once the file has been still this long. */
const SETTLED_MS = 2000;

type TypedArray = Float64Array | Float32Array | Int32Array;
type TypedCtor<T extends TypedArray> = { new (n: number): T };

/** A typed array that grows by doubling. */
class Column<T extends TypedArray> {
  data: T;
  length = 0;
  constructor(
    private readonly ctor: TypedCtor<T>,
    private readonly fill: number,
  ) {
    this.data = new ctor(1024);
    this.data.fill(fill);
  }
  set(i: number, v: number): void {
    if (i >= this.data.length) {
      const bigger = new this.ctor(Math.max(this.data.length * 2, i + 1));
      bigger.fill(this.fill);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[i] = v;
    if (i >= this.length) this.length = i + 1;
  }
  get(i: number): number {
    return i < this.length ? this.data[i] : this.fill;
  }
  /** Bytes held. */
  get bytes(): number {
    return this.data.byteLength;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Two independent 32-bit hashes of a string (FNV-1a with two bases): ids are matched by both. */
export function idHashes(id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x9e3779b9;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

/** The id of a record: `id`, or for `eval chunks` rows the solution's id. */
export function recordId(v: unknown): string | null {
  if (!isObj(v)) return null;
  if (typeof v.id === 'string') return v.id;
  if (typeof v.solution === 'string') return v.solution;
  return null;
}

/** ProcessBench prediction classes: where the predicted first error lies against the true one. */
export const PREDICTION_CLASSES = ['exact', 'early', 'late', 'missed', 'none'] as const;
export type PredictionClass = (typeof PREDICTION_CLASSES)[number];
/**
 * exact: the predicted first error is the true one (−1 = no error); early: an error predicted
 * before the true one (or in an error-free solution); late: after it; missed: an error the judge
 * did not see (predicted −1); none: no usable prediction (a format failure, counted as a miss).
 */
export function predictionClass(label: number, prediction: number | null): PredictionClass {
  if (prediction === null) return 'none';
  if (prediction === label) return 'exact';
  if (prediction < 0) return 'missed';
  if (label < 0 || prediction < label) return 'early';
  return 'late';
}

/** The first-error columns keep this many signals (a file naming more is data, not labels). */
const MAX_SIGNALS = 16;
/** No first error recorded under this signal. */
export const NO_SIGNAL = -2;

/** What the filters read, per kind of file (a record's value or a default for records without it). */
export interface IndexColumns {
  /** Search: 1 correct, 0 wrong, −1 unchecked. Labels: the final answer. Samples: correct samples. */
  correct: Column<Int32Array>;
  /** Search: rejected attempts (chunk-reset's resets), fallbacks, judge format failures, backtracks, no final answer. */
  resets: Column<Int32Array>;
  fallbacks: Column<Int32Array>;
  formatFailures: Column<Int32Array>;
  backtracks: Column<Int32Array>;
  noAnswer: Column<Int32Array>;
  /** Search: policy + judge tokens. */
  tokens: Column<Float64Array>;
  /** Labels: Q̂ of the empty prefix and the lowest chunk Q̂ (NaN: none). */
  q0: Column<Float32Array>;
  qMin: Column<Float32Array>;
  /** Labels: the signals' first errors differ. */
  disagree: Column<Int32Array>;
  /** Labels: first error per signal (−1 none, {@link NO_SIGNAL} when the record has no such signal). */
  firstError: Map<string, Column<Int32Array>>;
  /** Predictions: index into {@link PREDICTION_CLASSES}. Chunk judgments: 1 agrees, 0 disagrees, −1 not compared. */
  cls: Column<Int32Array>;
}

function emptyColumns(): IndexColumns {
  return {
    correct: new Column(Int32Array, -1),
    resets: new Column(Int32Array, 0),
    fallbacks: new Column(Int32Array, 0),
    formatFailures: new Column(Int32Array, 0),
    backtracks: new Column(Int32Array, 0),
    noAnswer: new Column(Int32Array, 0),
    tokens: new Column(Float64Array, 0),
    q0: new Column(Float32Array, Number.NaN),
    qMin: new Column(Float32Array, Number.NaN),
    disagree: new Column(Int32Array, 0),
    firstError: new Map(),
    cls: new Column(Int32Array, -1),
  };
}

/** What one record adds to the columns, by kind. */
function indexFields(kind: FileKind, cols: IndexColumns, i: number, r: unknown): void {
  if (!isObj(r)) return;
  if (kind === 'search') {
    cols.correct.set(i, r.correct === true ? 1 : r.correct === false ? 0 : -1);
    const trace = Array.isArray(r.trace) ? r.trace.filter(isObj) : [];
    const stats = isObj(r.stats) ? r.stats : {};
    const count = (status: string) => trace.reduce((n, t) => n + (t.status === status ? 1 : 0), 0);
    cols.resets.set(i, typeof stats.resets === 'number' ? num(stats.resets) : count('rejected'));
    cols.fallbacks.set(i, typeof stats.fallbacks === 'number' ? num(stats.fallbacks) : count('fallback'));
    cols.formatFailures.set(i, num(stats.formatFailures));
    cols.backtracks.set(i, Array.isArray(r.backtracks) ? r.backtracks.length : 0);
    cols.noAnswer.set(i, r.answer === null || r.answer === undefined ? 1 : 0);
    const cost = isObj(r.cost) ? r.cost : {};
    const t = (c: unknown) => (isObj(c) ? num(c.promptTokens) + num(c.completionTokens) : 0);
    cols.tokens.set(i, t(cost.policy) + t(cost.judge));
  } else if (kind === 'labels') {
    cols.correct.set(i, r.finalAnswerCorrect === true ? 1 : r.finalAnswerCorrect === false ? 0 : -1);
    cols.q0.set(i, typeof r.q0 === 'number' ? r.q0 : Number.NaN);
    let qMin = Number.NaN;
    for (const c of Array.isArray(r.chunks) ? r.chunks : [])
      if (isObj(c) && typeof c.q === 'number' && !(c.q >= qMin)) qMin = c.q;
    cols.qMin.set(i, qMin);
    const seen = new Set<number>();
    for (const [s, fe] of Object.entries(isObj(r.firstError) ? r.firstError : {})) {
      if (typeof fe !== 'number' || !Number.isInteger(fe)) continue;
      let col = cols.firstError.get(s);
      if (!col) {
        if (cols.firstError.size >= MAX_SIGNALS) continue;
        col = new Column(Int32Array, NO_SIGNAL);
        cols.firstError.set(s, col);
      }
      col.set(i, Math.max(-1, fe));
      seen.add(Math.max(-1, fe));
    }
    cols.disagree.set(i, seen.size > 1 ? 1 : 0);
  } else if (kind === 'predictions') {
    if (typeof r.label === 'number')
      cols.cls.set(
        i,
        PREDICTION_CLASSES.indexOf(
          predictionClass(r.label, typeof r.prediction === 'number' ? r.prediction : null),
        ),
      );
  } else if (kind === 'chunk-judgments') {
    cols.cls.set(i, r.agrees === true ? 1 : r.agrees === false ? 0 : -1);
  } else if (kind === 'samples') {
    const list = Array.isArray(r.samples) ? r.samples : [];
    cols.correct.set(i, list.filter((s) => isObj(s) && s.correct === true).length);
  }
}

/** Where the index stands against the file on disk. */
export interface IndexProgress {
  /** Bytes of the file read so far, and its size when last looked at. */
  bytes: number;
  size: number;
  /** Records indexed so far. */
  records: number;
  ready: boolean;
}

/** A file as the index reads it: an open descriptor (the caller opened it safely) and what it is. */
export interface OpenedFile {
  fd: number;
}

const readAsync = (fd: number, buf: Buffer, length: number, position: number) =>
  new Promise<number>((done, fail) => read(fd, buf, 0, length, position, (e, n) => (e ? fail(e) : done(n))));

/** Bytes [position, position + length) of a descriptor, fewer at its end. */
export async function readRange(fd: number, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(Math.max(0, length));
  let got = 0;
  while (got < length) {
    const n = await readAsync(fd, buf.subarray(got), length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

const yieldLoop = () => new Promise<void>((done) => setImmediate(done));

/** The index of one file (one version of it: same device and inode, not shrunk). */
export class JsonlIndex {
  readonly kind: FileKind;
  readonly dev: number;
  readonly ino: number;
  /** Byte start and length of every record (non-empty line), its 1-based line number, its id's hashes. */
  readonly starts = new Column(Float64Array, 0);
  readonly lengths = new Column(Float64Array, 0);
  readonly lines = new Column(Int32Array, 0);
  readonly hashA = new Column(Int32Array, 0);
  readonly hashB = new Column(Int32Array, 0);
  /** 1 when the record is not JSON (or is longer than {@link MAX_LINE_BYTES}). */
  readonly bad = new Column(Int32Array, 0);
  readonly cols = emptyColumns();
  records = 0;
  /** Bytes indexed: the end of the last record taken (a partial last line is not). */
  indexedBytes = 0;
  /** The last record was taken without its newline (a settled file): growth means a rebuild. */
  endsWithoutNewline = false;
  size = 0;
  mtimeMs = 0;
  /** Bumped at every extension: caches of filter results are keyed by it. */
  version = 0;
  /** Seconds the last build or extension took; null while one runs. */
  seconds: number | null = null;
  private line = 0;
  private summary: SummaryAccumulator;
  private building: Promise<void> | null = null;

  constructor(kind: FileKind, dev: number, ino: number) {
    this.kind = kind;
    this.dev = dev;
    this.ino = ino;
    this.summary = summaryAccumulator(kind);
  }

  /** A build or an extension is under way. */
  get isBuilding(): boolean {
    return this.building !== null;
  }

  get progress(): IndexProgress {
    return { bytes: this.indexedBytes, size: this.size, records: this.records, ready: !this.building };
  }

  summaryResult() {
    return this.summary.result();
  }

  /** Memory the index holds (typed arrays), in bytes. */
  get bytes(): number {
    const c = this.cols;
    let n = [this.starts, this.lengths, this.lines, this.hashA, this.hashB, this.bad].reduce(
      (s, x) => s + x.bytes,
      0,
    );
    for (const col of [c.correct, c.resets, c.fallbacks, c.formatFailures, c.backtracks, c.noAnswer])
      n += col.bytes;
    n += c.tokens.bytes + c.q0.bytes + c.qMin.bytes + c.disagree.bytes + c.cls.bytes;
    for (const col of c.firstError.values()) n += col.bytes;
    return n;
  }

  /** Read what the file holds beyond what is indexed (the whole file the first time); one reader at a time. */
  update(fd: number, size: number, mtimeMs: number): Promise<void> {
    if (!this.building) {
      const started = performance.now();
      this.seconds = null;
      this.building = this.extend(fd, size, mtimeMs).finally(() => {
        this.building = null;
        this.seconds = (performance.now() - started) / 1000;
      });
    }
    return this.building;
  }

  private take(start: number, bytes: Buffer | null, length: number): void {
    const i = this.records;
    this.line++;
    this.starts.set(i, start);
    this.lengths.set(i, length);
    this.lines.set(i, this.line);
    let value: unknown;
    let ok = false;
    if (bytes) {
      try {
        value = JSON.parse(bytes.toString('utf8'));
        ok = true;
      } catch {}
    }
    this.bad.set(i, ok ? 0 : 1);
    const id = ok ? recordId(value) : null;
    if (id !== null) {
      const [a, b] = idHashes(id);
      this.hashA.set(i, a | 0);
      this.hashB.set(i, b | 0);
    }
    if (ok) {
      indexFields(this.kind, this.cols, i, value);
      this.summary.add(value, i);
    }
    this.records++;
  }

  private async extend(fd: number, size: number, mtimeMs: number): Promise<void> {
    this.size = size;
    this.mtimeMs = mtimeMs;
    let pos = this.indexedBytes;
    let window = WINDOW;
    while (pos < size) {
      const buf = await readRange(fd, pos, Math.min(window, size - pos));
      if (buf.length === 0) break;
      let at = 0;
      for (;;) {
        const nl = buf.indexOf(10, at);
        if (nl < 0) break;
        const lineStart = at;
        at = nl + 1;
        // Blank lines (and a \r before the newline) are not records.
        let end = nl;
        if (end > lineStart && buf[end - 1] === 13) end--;
        if (buf.subarray(lineStart, end).every((c) => c === 32 || c === 9)) {
          this.line++;
          continue;
        }
        this.take(pos + lineStart, buf.subarray(lineStart, end), end - lineStart);
      }
      if (at === 0) {
        // No newline in the window: a long line (read a bigger window), or the file's end.
        if (pos + buf.length >= size) break;
        if (window < MAX_LINE_BYTES) {
          window *= 2;
          continue;
        }
        // Longer than any record the view reads: skip to its end and mark it bad.
        const start = pos;
        let scan = pos + buf.length;
        let found = -1;
        while (scan < size && found < 0) {
          const part = await readRange(fd, scan, Math.min(WINDOW, size - scan));
          const k = part.indexOf(10);
          if (k >= 0) found = scan + k;
          scan += part.length;
          await yieldLoop();
        }
        if (found < 0) break;
        this.take(start, null, found - start);
        pos = found + 1;
        this.indexedBytes = pos;
        window = WINDOW;
        continue;
      }
      pos += at;
      this.indexedBytes = pos;
      window = WINDOW;
      this.version++;
      await yieldLoop();
    }
    // A last line without a newline: a job mid-write, or a file written without a final newline.
    // It is taken once the file has been still for a while and parses; growth then means a rebuild.
    if (pos < size && Date.now() - mtimeMs > SETTLED_MS && size - pos <= MAX_LINE_BYTES) {
      const tail = await readRange(fd, pos, size - pos);
      const text = tail.toString('utf8').trim();
      if (text !== '') {
        try {
          JSON.parse(text);
          this.take(pos, tail, tail.length);
          this.indexedBytes = size;
          this.endsWithoutNewline = true;
        } catch {}
      }
    }
    this.version++;
  }
}

/** A file's identity and size, read from its open descriptor. */
export function describe(fd: number): { dev: number; ino: number; size: number; mtimeMs: number } {
  const st = fstatSync(fd);
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * The indexes of the files the server has shown, by real path, least recently used dropped past
 * `max`. `get` brings a file's index up to date with the file: the same index when nothing
 * changed, extended when the file grew, a new one when it is another file or shrank.
 */
export class IndexCache {
  private readonly entries = new Map<string, JsonlIndex>();
  constructor(private readonly max = 16) {}

  /** The index of `path` (opened as `fd`), current or being brought up to date (await `ready`). */
  get(path: string, fd: number, kind: FileKind): { index: JsonlIndex; ready: Promise<void> } {
    const now = describe(fd);
    let index = this.entries.get(path);
    const grewAfterNewline =
      index &&
      index.dev === now.dev &&
      index.ino === now.ino &&
      index.kind === kind &&
      now.size >= index.indexedBytes &&
      !(index.endsWithoutNewline && now.size > index.indexedBytes);
    if (!index || !grewAfterNewline) {
      index = new JsonlIndex(kind, now.dev, now.ino);
    }
    this.entries.delete(path);
    this.entries.set(path, index);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    // Current: read to the end of this version of the file, and no read under way (a build still
    // running has set the size it is reading to, not reached it).
    const current =
      !index.isBuilding && index.size === now.size && index.mtimeMs === now.mtimeMs && index.version > 0;
    const ready = current ? Promise.resolve() : index.update(fd, now.size, now.mtimeMs);
    return { index, ready };
  }
}
