import { HttpError } from '../core/http.js';
import type { FilterDef, PairedDifference } from './api.js';
import {
  idHashes,
  type JsonlIndex,
  MAX_LINE_BYTES,
  NO_SIGNAL,
  PREDICTION_CLASSES,
  readRange,
  recordId,
} from './jsonl-index.js';

/**
 * Filters, text search, id lookup and the pairing of two files, computed over a file's index
 * (typed arrays) rather than its records: a filter over 200,000 records is a loop over numbers;
 * only a text search reads the file again, a slice at a time with the event loop free between
 * slices. Results are cached per index version, so paging through them costs nothing more.
 */

/** The filter parameters each kind of file understands (their values are checked where read). */
export const FILTER_PARAMS = [
  'correct',
  'resets',
  'fallbacks',
  'format',
  'backtracks',
  'answer',
  'signal',
  'fe',
  'disagree',
  'final',
  'qof',
  'qlo',
  'qhi',
  'pred',
  'agree',
  'solved',
] as const;
export type FilterParam = (typeof FILTER_PARAMS)[number];
export type Filters = Partial<Record<FilterParam, string>>;

/** How many first-error positions get a choice of their own; later ones share `≥ N`. */
const FE_POSITIONS = 10;
const yieldLoop = () => new Promise<void>((done) => setImmediate(done));

type Pred = (i: number) => boolean;

const choice = (value: string | undefined, allowed: readonly string[], param: string): string | undefined => {
  if (value === undefined || value === '') return undefined;
  if (!allowed.includes(value)) throw new HttpError(400, `${param} must be one of ${allowed.join(', ')}`);
  return value;
};
const withOrWithout = (
  v: string | undefined,
  param: string,
  col: { get(i: number): number },
): Pred | null => {
  const c = choice(v, ['with', 'without'], param);
  if (!c) return null;
  return c === 'with' ? (i) => col.get(i) > 0 : (i) => col.get(i) <= 0;
};
const numberParam = (v: string | undefined, param: string): number | undefined => {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new HttpError(400, `${param} must be a number`);
  return n;
};

/** The signal a labels filter reads (the file's first signal when none is named). */
function signalOf(index: JsonlIndex, filters: Filters): string | undefined {
  const signals = [...index.cols.firstError.keys()];
  if (filters.signal === undefined || filters.signal === '') return signals[0];
  if (!signals.includes(filters.signal))
    throw new HttpError(400, `signal must be one of ${signals.join(', ') || '(this file has none)'}`);
  return filters.signal;
}

const feValues = () => [
  'none',
  'any',
  ...Array.from({ length: FE_POSITIONS }, (_, k) => String(k)),
  `${FE_POSITIONS}+`,
];
function fePred(value: string, col: { get(i: number): number }): Pred {
  if (value === 'none') return (i) => col.get(i) === -1;
  if (value === 'any') return (i) => col.get(i) >= 0;
  if (value.endsWith('+')) return (i) => col.get(i) >= FE_POSITIONS;
  const k = Number(value);
  return (i) => col.get(i) === k;
}

/** The predicates the filters name, for this file's kind; an unknown filter value is a 400. */
function predicates(index: JsonlIndex, filters: Filters): Pred[] {
  const c = index.cols;
  const out: Array<Pred | null> = [];
  if (index.kind === 'search') {
    const correct = choice(filters.correct, ['correct', 'wrong', 'unchecked'], 'correct');
    if (correct) {
      const want = correct === 'correct' ? 1 : correct === 'wrong' ? 0 : -1;
      out.push((i) => c.correct.get(i) === want);
    }
    out.push(withOrWithout(filters.resets, 'resets', c.resets));
    out.push(withOrWithout(filters.fallbacks, 'fallbacks', c.fallbacks));
    out.push(withOrWithout(filters.format, 'format', c.formatFailures));
    out.push(withOrWithout(filters.backtracks, 'backtracks', c.backtracks));
    out.push(withOrWithout(filters.answer, 'answer', c.noAnswer));
  } else if (index.kind === 'labels') {
    const fe = choice(filters.fe, feValues(), 'fe');
    if (fe) {
      const signal = signalOf(index, filters);
      const col = signal === undefined ? undefined : c.firstError.get(signal);
      out.push(col ? fePred(fe, col) : () => false);
    }
    const disagree = choice(filters.disagree, ['yes', 'no'], 'disagree');
    if (disagree)
      out.push(disagree === 'yes' ? (i) => c.disagree.get(i) === 1 : (i) => c.disagree.get(i) === 0);
    const final = choice(filters.final, ['correct', 'wrong'], 'final');
    if (final) {
      const want = final === 'correct' ? 1 : 0;
      out.push((i) => c.correct.get(i) === want);
    }
    const lo = numberParam(filters.qlo, 'qlo');
    const hi = numberParam(filters.qhi, 'qhi');
    if (lo !== undefined || hi !== undefined) {
      const col = choice(filters.qof, ['q0', 'min'], 'qof') === 'min' ? c.qMin : c.q0;
      const a = lo ?? Number.NEGATIVE_INFINITY;
      const b = hi ?? Number.POSITIVE_INFINITY;
      // Float32 keeps Q̂ to ~7 digits: the bounds are widened by as much.
      out.push((i) => {
        const q = col.get(i);
        return q >= a - 1e-6 && q <= b + 1e-6;
      });
    }
  } else if (index.kind === 'predictions') {
    const pred = choice(filters.pred, PREDICTION_CLASSES, 'pred');
    if (pred) {
      const want = PREDICTION_CLASSES.indexOf(pred as (typeof PREDICTION_CLASSES)[number]);
      out.push((i) => c.cls.get(i) === want);
    }
  } else if (index.kind === 'chunk-judgments') {
    const agree = choice(filters.agree, ['agree', 'disagree', 'none'], 'agree');
    if (agree) {
      const want = agree === 'agree' ? 1 : agree === 'disagree' ? 0 : -1;
      out.push((i) => c.cls.get(i) === want);
    }
  } else if (index.kind === 'samples') {
    const solved = choice(filters.solved, ['yes', 'no'], 'solved');
    if (solved) out.push(solved === 'yes' ? (i) => c.correct.get(i) > 0 : (i) => c.correct.get(i) <= 0);
  }
  return out.filter((p): p is Pred => p !== null);
}

/** How many records have each value of an integer column (values outside [lo, hi] are clamped into the ends). */
function histogram(col: { data: ArrayLike<number> }, n: number, lo: number, hi: number): number[] {
  const out = new Array<number>(hi - lo + 1).fill(0);
  const d = col.data;
  for (let i = 0; i < n; i++) {
    const v = d[i];
    out[Math.min(hi, Math.max(lo, v)) - lo]++;
  }
  return out;
}
/** Records whose value in a column is above zero. */
function positives(col: { data: ArrayLike<number> }, n: number): number {
  const d = col.data;
  let k = 0;
  for (let i = 0; i < n; i++) if (d[i] > 0) k++;
  return k;
}
/** Records with a number (not NaN) in a float column. */
function present(col: { data: ArrayLike<number> }, n: number): number {
  const d = col.data;
  let k = 0;
  for (let i = 0; i < n; i++) if (!Number.isNaN(d[i])) k++;
  return k;
}

const defsCache = new Map<string, FilterDef[]>();

/**
 * The filters this file's kind offers, each choice with the records it keeps (over the whole
 * file): one pass over each column, cached per version of the index and signal.
 */
export function filterDefs(index: JsonlIndex, filters: Filters): FilterDef[] {
  const signal = index.kind === 'labels' ? signalOf(index, filters) : undefined;
  const key = `${keyOf(index)}\0${signal ?? ''}`;
  const cached = defsCache.get(key);
  if (cached) return cached;
  const defs = computeFilterDefs(index, signal);
  if (defsCache.size >= 64) defsCache.clear();
  defsCache.set(key, defs);
  return defs;
}

function computeFilterDefs(index: JsonlIndex, signal: string | undefined): FilterDef[] {
  const c = index.cols;
  const n = index.records;
  const withWithout = (param: FilterParam, label: string, col: { data: ArrayLike<number> }): FilterDef => {
    const k = positives(col, n);
    return {
      param,
      label,
      type: 'choice',
      choices: [
        { value: 'with', label: 'with', count: k },
        { value: 'without', label: 'without', count: n - k },
      ],
    };
  };
  if (index.kind === 'search') {
    const [unchecked, wrong, right] = histogram(c.correct, n, -1, 1);
    return [
      {
        param: 'correct',
        label: 'final answer',
        type: 'choice',
        choices: [
          { value: 'correct', label: 'correct', count: right },
          { value: 'wrong', label: 'wrong', count: wrong },
          { value: 'unchecked', label: 'unchecked', count: unchecked },
        ],
      },
      withWithout('resets', 'rejected attempts (resets)', c.resets),
      withWithout('fallbacks', 'fallbacks', c.fallbacks),
      withWithout('format', 'judge format failures', c.formatFailures),
      withWithout('backtracks', 'backtracks', c.backtracks),
      withWithout('answer', 'no final answer', c.noAnswer),
    ];
  }
  if (index.kind === 'labels') {
    const signals = [...c.firstError.keys()];
    // Per signal: records without it (NO_SIGNAL), without an error (−1), at chunk 0 … FE_POSITIONS−1, and later.
    const perSignal = new Map(
      signals.map((s) => [s, histogram(c.firstError.get(s) as never, n, NO_SIGNAL, FE_POSITIONS)]),
    );
    const h = signal === undefined ? undefined : perSignal.get(signal);
    const at = (v: number) => (h ? h[v - NO_SIGNAL] : 0);
    const [, wrong, right] = histogram(c.correct, n, -1, 1);
    const disagree = positives(c.disagree, n);
    return [
      {
        param: 'signal',
        label: 'signal',
        type: 'choice',
        choices: signals.map((s) => ({ value: s, label: s, count: n - (perSignal.get(s)?.[0] ?? 0) })),
      },
      {
        param: 'fe',
        label: `first error (${signal ?? 'no signal'})`,
        type: 'choice',
        choices: feValues().map((v) => {
          let count: number;
          if (v === 'none') count = at(-1);
          else if (v === 'any') count = h ? h.slice(2).reduce((x, y) => x + y, 0) : 0;
          else if (v.endsWith('+')) count = at(FE_POSITIONS);
          else count = at(Number(v));
          return {
            value: v,
            label: v === 'none' ? 'no error' : v === 'any' ? 'any error' : `at chunk ${v}`,
            count,
          };
        }),
      },
      {
        param: 'disagree',
        label: 'signals disagree on the first error',
        type: 'choice',
        choices: [
          { value: 'yes', label: 'disagree', count: disagree },
          { value: 'no', label: 'agree', count: n - disagree },
        ],
      },
      {
        param: 'final',
        label: 'final answer',
        type: 'choice',
        choices: [
          { value: 'correct', label: 'correct', count: right },
          { value: 'wrong', label: 'wrong', count: wrong },
        ],
      },
      {
        param: 'qof',
        label: 'Q̂ range of',
        type: 'choice',
        choices: [
          { value: 'q0', label: 'the empty prefix', count: present(c.q0, n) },
          { value: 'min', label: 'the lowest chunk', count: present(c.qMin, n) },
        ],
      },
      { param: 'qlo', label: 'Q̂ at least', type: 'range', min: 0, max: 1 },
      { param: 'qhi', label: 'Q̂ at most', type: 'range', min: 0, max: 1 },
    ];
  }
  if (index.kind === 'predictions') {
    const h = histogram(c.cls, n, -1, PREDICTION_CLASSES.length - 1);
    return [
      {
        param: 'pred',
        label: 'predicted first error',
        type: 'choice',
        choices: PREDICTION_CLASSES.map((v, k) => ({ value: v, label: v, count: h[k + 1] })),
      },
    ];
  }
  if (index.kind === 'chunk-judgments') {
    const [none, disagree, agree] = histogram(c.cls, n, -1, 1);
    return [
      {
        param: 'agree',
        label: 'judge vs label',
        type: 'choice',
        choices: [
          { value: 'agree', label: 'agree', count: agree },
          { value: 'disagree', label: 'disagree', count: disagree },
          { value: 'none', label: 'not compared', count: none },
        ],
      },
    ];
  }
  if (index.kind === 'samples') {
    const k = positives(c.correct, n);
    return [
      {
        param: 'solved',
        label: 'a correct sample',
        type: 'choice',
        choices: [
          { value: 'yes', label: 'with', count: k },
          { value: 'no', label: 'without', count: n - k },
        ],
      },
    ];
  }
  return [];
}

/** Cached results: a few per server, keyed by the index, its version and the query. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next().value;
      if (oldest === undefined) break;
      this.map.delete(oldest);
    }
  }
}

const ids = new WeakMap<JsonlIndex, number>();
let nextId = 1;
const keyOf = (index: JsonlIndex) => {
  let id = ids.get(index);
  if (id === undefined) {
    id = nextId++;
    ids.set(index, id);
  }
  return `${id}@${index.version}`;
};

const textCache = new Lru<Uint8Array>(8);
const matchCache = new Lru<Int32Array>(16);

/** Longest text search (characters). */
export const MAX_TEXT_QUERY = 200;
/** Bytes read per text-search step. */
const TEXT_SLICE = 1 << 20;

/**
 * Which records contain `text` (case-insensitive; searched in the records as written, so a quote
 * or a newline is matched as the file escapes it). The file is read a slice of records at a time
 * through its descriptor, and the event loop runs between slices.
 */
async function textMatches(index: JsonlIndex, fd: number, text: string): Promise<Uint8Array> {
  const key = `${keyOf(index)}\0${text}`;
  const cached = textCache.get(key);
  if (cached) return cached;
  const hits = new Uint8Array(index.records);
  const needle = JSON.stringify(text.toLowerCase()).slice(1, -1);
  const ascii = /^[\x20-\x7e]*$/.test(needle);
  const needleBytes = Buffer.from(needle, 'utf8');
  let i = 0;
  while (i < index.records) {
    const first = i;
    const from = index.starts.get(first);
    let to = from;
    // A slice: records up to TEXT_SLICE bytes; a longer record is read on its own.
    while (i < index.records) {
      if (i !== first && (to - from >= TEXT_SLICE || index.lengths.get(i) > TEXT_SLICE)) break;
      to = index.starts.get(i) + index.lengths.get(i);
      i++;
    }
    if (index.lengths.get(first) > MAX_LINE_BYTES) continue;
    const buf = await readRange(fd, from, to - from);
    if (ascii) {
      // One byte a character (latin1, whose lower case keeps every length), so a hit's place in
      // the text is its place in the bytes; it maps to its record by offset, and the search goes
      // on after that record.
      const hay = buf.toString('latin1').toLowerCase();
      let r = first;
      for (let at = hay.indexOf(needle); at >= 0; ) {
        const pos = from + at;
        while (r < i - 1 && index.starts.get(r + 1) <= pos) r++;
        const end = index.starts.get(r) + index.lengths.get(r);
        if (pos + needleBytes.length <= end) hits[r] = 1;
        at = hay.indexOf(needle, Math.max(at + 1, end - from));
      }
    } else {
      for (let r = first; r < i; r++) {
        const s = index.starts.get(r) - from;
        const line = buf.toString('utf8', s, s + index.lengths.get(r)).toLowerCase();
        if (line.includes(needle)) hits[r] = 1;
      }
    }
    await yieldLoop();
  }
  textCache.set(key, hits);
  return hits;
}

/**
 * The records (indices, file order) matching the filters and the text, or null when nothing
 * filters (every record).
 */
export async function matchingRecords(
  index: JsonlIndex,
  fd: number,
  filters: Filters,
  text: string | undefined,
): Promise<Int32Array | null> {
  const preds = predicates(index, filters);
  if (!preds.length && !text) return null;
  const key = `${keyOf(index)}\0${JSON.stringify(filters)}\0${text ?? ''}`;
  const cached = matchCache.get(key);
  if (cached) return cached;
  const hits = text ? await textMatches(index, fd, text) : null;
  const out = new Int32Array(index.records);
  let n = 0;
  for (let i = 0; i < index.records; i++) {
    if (hits && !hits[i]) continue;
    if (preds.every((p) => p(i))) out[n++] = i;
  }
  const result = out.slice(0, n);
  matchCache.set(key, result);
  return result;
}

/** The first record whose id is `id` (matched by its two hashes, then read to be sure), or −1. */
export async function findId(index: JsonlIndex, fd: number, id: string): Promise<number> {
  const [a, b] = idHashes(id);
  for (let i = 0; i < index.records; i++) {
    if (index.hashA.get(i) !== (a | 0) || index.hashB.get(i) !== (b | 0)) continue;
    const [rec] = await readRecords(index, fd, [i]);
    if (recordId(rec.value) === id) return i;
  }
  return -1;
}

/** Records read from their offsets: the value, or null with `bad` when the line is not JSON. */
export async function readRecords(
  index: JsonlIndex,
  fd: number,
  which: ArrayLike<number>,
  maxBytes = 256 << 20,
): Promise<Array<{ index: number; line: number; value: unknown; bad: boolean }>> {
  const out: Array<{ index: number; line: number; value: unknown; bad: boolean }> = [];
  let bytes = 0;
  for (let k = 0; k < which.length; k++) {
    const i = which[k];
    const length = index.lengths.get(i);
    const line = index.lines.get(i);
    if (index.bad.get(i) || length > MAX_LINE_BYTES) {
      out.push({ index: i, line, value: null, bad: true });
      continue;
    }
    // A page stops short rather than hold more than maxBytes of records at once.
    if (out.length > 0 && bytes + length > maxBytes) break;
    bytes += length;
    const buf = await readRange(fd, index.starts.get(i), length);
    try {
      out.push({ index: i, line, value: JSON.parse(buf.toString('utf8')), bad: false });
    } catch {
      // Rewritten since it was indexed: what is there now is not a record.
      out.push({ index: i, line, value: null, bad: true });
    }
  }
  return out;
}

// ---------- two runs over the same problems ----------

/** Records of B sorted by their id hashes (cached per version of B): the pairing's lookup table. */
const sortedCache = new Lru<Int32Array>(8);
function sortedByHash(index: JsonlIndex): Int32Array {
  const key = keyOf(index);
  const cached = sortedCache.get(key);
  if (cached) return cached;
  const order = new Int32Array(index.records);
  for (let i = 0; i < order.length; i++) order[i] = i;
  const a = index.hashA;
  const b = index.hashB;
  order.sort((x, y) => a.get(x) - a.get(y) || b.get(x) - b.get(y) || x - y);
  sortedCache.set(key, order);
  return order;
}

function lookup(index: JsonlIndex, order: Int32Array, ha: number, hb: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const j = order[mid];
    const d = index.hashA.get(j) - ha || index.hashB.get(j) - hb;
    if (d < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < order.length) {
    const j = order[lo];
    if (index.hashA.get(j) === ha && index.hashB.get(j) === hb) return j;
  }
  return -1;
}

/** Problems of A and B paired by id (A's order): index in A, index in B. */
export interface Pairing {
  a: Int32Array;
  b: Int32Array;
  /** Records of A without a partner in B, and of B without one in A. */
  onlyA: number;
  onlyB: number;
}

const pairCache = new Lru<Pairing>(4);
/** Pair the records of two files by id (records without an id are not paired). */
export function pairRecords(a: JsonlIndex, b: JsonlIndex): Pairing {
  const key = `${keyOf(a)}|${keyOf(b)}`;
  const cached = pairCache.get(key);
  if (cached) return cached;
  const order = sortedByHash(b);
  const pa = new Int32Array(a.records);
  const pb = new Int32Array(a.records);
  const usedB = new Uint8Array(b.records);
  let n = 0;
  for (let i = 0; i < a.records; i++) {
    const ha = a.hashA.get(i);
    const hb = a.hashB.get(i);
    if (ha === 0 && hb === 0) continue; // no id
    const j = lookup(b, order, ha, hb);
    if (j < 0 || usedB[j]) continue;
    usedB[j] = 1;
    pa[n] = i;
    pb[n] = j;
    n++;
  }
  const result = { a: pa.slice(0, n), b: pb.slice(0, n), onlyA: a.records - n, onlyB: b.records - n };
  pairCache.set(key, result);
  return result;
}

/**
 * The mean of per-problem differences (B − A) with its 95% interval: mean ± t·sd/√n, t the
 * two-sided 97.5% quantile of Student's t with n − 1 degrees of freedom (1.96 for large n).
 */
export function pairedDifference(diffs: ArrayLike<number>): PairedDifference {
  const n = diffs.length;
  if (n === 0) return { n, mean: null, low: null, high: null, sd: null };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += diffs[i];
  const mean = sum / n;
  if (n < 2) return { n, mean, low: null, high: null, sd: null };
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (diffs[i] - mean) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  const half = tQuantile975(n - 1) * (sd / Math.sqrt(n));
  return { n, mean, low: mean - half, high: mean + half, sd };
}

/** Two-sided 95% quantile of Student's t (table for small df, then the Cornish–Fisher expansion). */
export function tQuantile975(df: number): number {
  const table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
  if (df <= table.length) return table[Math.max(1, df) - 1];
  const z = 1.959964;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  return z + g1 / df + g2 / df ** 2;
}

export const COMPARE_ONLY = ['differ', 'a', 'b', 'same'] as const;

/** Which pairs a compare page lists: all, those whose correctness differs, only A right, only B right, same. */
export function comparePairs(
  a: JsonlIndex,
  b: JsonlIndex,
  pairing: Pairing,
  only: string | undefined,
): Int32Array | null {
  const which = choice(only, COMPARE_ONLY, 'only');
  if (!which) return null;
  const out = new Int32Array(pairing.a.length);
  let n = 0;
  for (let k = 0; k < pairing.a.length; k++) {
    const ca = a.cols.correct.get(pairing.a[k]);
    const cb = b.cols.correct.get(pairing.b[k]);
    const keep =
      which === 'differ'
        ? ca !== cb
        : which === 'a'
          ? ca === 1 && cb === 0
          : which === 'b'
            ? ca === 0 && cb === 1
            : ca === cb;
    if (keep) out[n++] = k;
  }
  return out.slice(0, n);
}
