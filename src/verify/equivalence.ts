import { type DecimalCtor, type ExactResult, exactEqual, scaleExact, toNumber } from './exact.js';
import { MAX_ANSWER_CHARS, normalizeAnswer } from './normalize.js';
import {
  type CompiledExpression,
  compileExpression,
  decimalAt,
  engineLoadTime,
  type NumericValue,
  PRECISE_DIGITS,
  type PreciseValue,
  SAMPLE_POINTS,
  sameCanonicalForm,
  valuesAt,
  valuesEqual,
} from './numeric.js';
import { type AnswerNode, isSimpleName, parseAnswer, type RelOp } from './structure.js';

/** Grader policies on which public graders disagree. Defaults are documented in docs/verify.md. */
export interface EquivalenceOptions {
  /**
   * How a percent sign on one side is read. `'flexible'` (default): `25\%` equals `25` and `0.25`.
   * `'strict'`: `25\%` equals `0.25` only (and `25\%`).
   */
  percent?: 'flexible' | 'strict';
  /**
   * Whether several answers written as a bare list (`1, 2, 3`) must match in order.
   * `'unordered'` (default) compares them as a multiset with duplicates ignored; tuples `(1, 2)` and
   * intervals are always ordered, sets `\{…\}` never.
   */
  listOrder?: 'unordered' | 'ordered';
  /** Relative tolerance for comparing numbers (default 1e-6). */
  floatTolerance?: number;
  /** Time cap per comparison in milliseconds (default 1000); over it the verdict is "not equal". */
  timeoutMs?: number;
}

/** Method that decided a comparison. */
export type EquivalenceMethod =
  | 'string'
  | 'number'
  | 'symbolic'
  | 'structure'
  | 'text'
  | 'none'
  | 'timeout'
  | 'error';

/** Verdict of {@link explainEquivalence}, with the method used and both normalised forms. */
export interface EquivalenceExplanation {
  equal: boolean;
  /** What decided the verdict. */
  method: EquivalenceMethod;
  /** Normalised gold answer. */
  gold: string;
  /** Normalised predicted answer (null when there was none). */
  pred: string | null;
  /** Why the verdict was "not equal" when that was not a plain mismatch (timeout, no prediction, …). */
  reason?: string;
}

interface Settings {
  percent: 'flexible' | 'strict';
  ordered: boolean;
  tol: number;
  deadline: number;
  /** Engine load time when the comparison started (loading is not counted against the cap). */
  loadAtStart: number;
}

class TimeoutError extends Error {}

interface Ctx extends Settings {
  goldPercent: boolean;
  predPercent: boolean;
  methods: Set<EquivalenceMethod>;
}

/** Compare two answers. Never throws; see {@link explainEquivalence} for why. */
export function isEquivalent(gold: string, pred: string | null, options?: EquivalenceOptions): boolean {
  return explainEquivalence(gold, pred, options).equal;
}

/**
 * Compare two final answers (already extracted; use `extractAnswer` on full solutions) and say how.
 * Never throws and never runs past `options.timeoutMs`.
 */
export function explainEquivalence(
  gold: string,
  pred: string | null,
  options: EquivalenceOptions = {},
): EquivalenceExplanation {
  const goldText = typeof gold === 'string' ? gold : String(gold ?? '');
  if (pred === null || pred === undefined) {
    return { equal: false, method: 'none', gold: goldText.trim(), pred: null, reason: 'no predicted answer' };
  }
  const predText = typeof pred === 'string' ? pred : String(pred);
  const settings: Settings = {
    percent: options.percent ?? 'flexible',
    ordered: options.listOrder === 'ordered',
    tol: options.floatTolerance ?? 1e-6,
    deadline: Date.now() + (options.timeoutMs ?? 1000),
    loadAtStart: engineLoadTime(),
  };
  let g = goldText.trim();
  let p = predText.trim();
  try {
    if (g.length > MAX_ANSWER_CHARS || p.length > MAX_ANSWER_CHARS) {
      const equal = g === p;
      return {
        equal,
        method: 'string',
        gold: g,
        pred: p,
        reason: equal ? undefined : 'answer too long to parse',
      };
    }
    const gn = normalizeAnswer(g);
    const pn = normalizeAnswer(p);
    g = gn.text;
    p = pn.text;
    if (g === p && gn.percent === pn.percent) return { equal: true, method: 'string', gold: g, pred: p };
    if (g === '' || p === '')
      return { equal: false, method: 'string', gold: g, pred: p, reason: 'empty answer' };
    if (g === p && settings.percent === 'flexible')
      return { equal: true, method: 'string', gold: g, pred: p };
    const ctx: Ctx = { ...settings, goldPercent: gn.percent, predPercent: pn.percent, methods: new Set() };
    const equal = compareNodes(parseAnswer(g), parseAnswer(p), ctx);
    return { equal, method: pickMethod(ctx.methods), gold: g, pred: p };
  } catch (err) {
    if (err instanceof TimeoutError) {
      return {
        equal: false,
        method: 'timeout',
        gold: g,
        pred: p,
        reason: `over the ${options.timeoutMs ?? 1000} ms cap`,
      };
    }
    return {
      equal: false,
      method: 'error',
      gold: g,
      pred: p,
      reason: (err as Error)?.message ?? String(err),
    };
  }
}

function pickMethod(methods: Set<EquivalenceMethod>): EquivalenceMethod {
  for (const m of ['symbolic', 'number', 'structure', 'text', 'string'] as const)
    if (methods.has(m)) return m;
  return 'structure';
}

function checkTime(ctx: Ctx): void {
  if (Date.now() - (engineLoadTime() - ctx.loadAtStart) > ctx.deadline) throw new TimeoutError('time cap');
}

/** Value an equation or approximation stands for: `x = 5` -> 5, `\frac{\sqrt3}{3} \approx 0.577` -> lhs. */
function relationValue(node: AnswerNode): AnswerNode | null {
  if (node.kind !== 'rel') return null;
  const { ops, sides, latex } = node;
  // "x = 5+5+1 = 1/3 ≈ 11": the exact value is the last one before the first ≈.
  const approxAt = ops.indexOf('≈');
  if (approxAt > 0 && ops.slice(0, approxAt).every((o) => o === '=') && isSimpleName(latex[0])) {
    return sides[approxAt];
  }
  if (ops.every((o) => o === '=' || o === '≈') && isSimpleName(latex[0])) return sides[sides.length - 1];
  if (ops.every((o) => o === '∈') && ops.length === 1 && isSimpleName(latex[0])) return sides[1];
  if (ops.length === 1 && ops[0] === '≈') return sides[0];
  return null;
}

/** An inequality chain `a < x < b` with a simple middle, or `x > a`, as an interval list node. */
function inequalityAsInterval(node: AnswerNode): AnswerNode | null {
  if (node.kind !== 'rel') return null;
  const { ops, sides, latex } = node;
  const strict = (o: RelOp) => o === '<' || o === '>';
  const lower = (o: RelOp) => o === '<' || o === '≤';
  const upper = (o: RelOp) => o === '>' || o === '≥';
  const inf: AnswerNode = { kind: 'expr', latex: '\\infty' };
  const negInf: AnswerNode = { kind: 'expr', latex: '-\\infty' };
  if (ops.length === 2 && isSimpleName(latex[1])) {
    const absMiddle = /^\|.*\|$/.test(latex[1].replace(/\s+/g, ''));
    if (lower(ops[0]) && lower(ops[1])) {
      const iv: AnswerNode = {
        kind: 'list',
        open: strict(ops[0]) ? '(' : '[',
        close: strict(ops[1]) ? ')' : ']',
        items: [sides[0], sides[2]],
      };
      if (!absMiddle) return iv;
      // a ≤ |z| ≤ b  is  [-b, -a] ∪ [a, b]
      const neg = (n: AnswerNode): AnswerNode =>
        n.kind === 'expr' ? { kind: 'expr', latex: `-(${n.latex})` } : n;
      return {
        kind: 'union',
        items: [
          {
            kind: 'list',
            open: iv.close === ')' ? '(' : '[',
            close: iv.open === '(' ? ')' : ']',
            items: [neg(sides[2]), neg(sides[0])],
          },
          iv,
        ],
      };
    }
    if (upper(ops[0]) && upper(ops[1])) {
      return {
        kind: 'list',
        open: strict(ops[1]) ? '(' : '[',
        close: strict(ops[0]) ? ')' : ']',
        items: [sides[2], sides[0]],
      };
    }
  }
  if (ops.length === 1 && (lower(ops[0]) || upper(ops[0]))) {
    const leftName = isSimpleName(latex[0]);
    const rightName = isSimpleName(latex[1]);
    if (leftName === rightName) return null;
    const bound = leftName ? sides[1] : sides[0];
    // Normalise to "name OP bound".
    let op: RelOp = ops[0];
    if (!leftName) op = ({ '<': '>', '≤': '≥', '>': '<', '≥': '≤' } as Record<string, RelOp>)[op] ?? op;
    if (op === '<' || op === '≤')
      return { kind: 'list', open: '(', close: op === '<' ? ')' : ']', items: [negInf, bound] };
    return { kind: 'list', open: op === '>' ? '(' : '[', close: ')', items: [bound, inf] };
  }
  return null;
}

function compareNodes(a: AnswerNode, b: AnswerNode, ctx: Ctx): boolean {
  checkTime(ctx);
  // Singleton lists are their element.
  if (a.kind === 'list' && a.open === '' && a.items.length === 1) return compareNodes(a.items[0], b, ctx);
  if (b.kind === 'list' && b.open === '' && b.items.length === 1) return compareNodes(a, b.items[0], ctx);
  // "15\frac{39}{40}, or \frac{639}{40}": one answer written several ways.
  if (a.kind === 'list' && a.open === '' && b.kind !== 'list') {
    const distinct = dedupeNodes(a.items, ctx);
    return distinct.length === 1 && compareNodes(distinct[0], b, ctx);
  }
  if (b.kind === 'list' && b.open === '' && a.kind !== 'list') {
    const distinct = dedupeNodes(b.items, ctx);
    return distinct.length === 1 && compareNodes(a, distinct[0], ctx);
  }

  if (a.kind === 'rel' || b.kind === 'rel') return compareRelations(a, b, ctx);

  if (a.kind === 'choice' || b.kind === 'choice') {
    ctx.methods.add('text');
    const la = a.kind === 'choice' ? a.letter : a.kind === 'expr' || a.kind === 'text' ? nodeText(a) : null;
    const lb = b.kind === 'choice' ? b.letter : b.kind === 'expr' || b.kind === 'text' ? nodeText(b) : null;
    return la !== null && lb !== null && la === lb;
  }
  if (a.kind === 'text' || b.kind === 'text') {
    ctx.methods.add('text');
    const ta = nodeText(a);
    const tb = nodeText(b);
    return ta !== null && tb !== null && ta.toLowerCase() === tb.toLowerCase();
  }
  if (a.kind === 'union' || b.kind === 'union') {
    ctx.methods.add('structure');
    if (a.kind !== 'union' || b.kind !== 'union') return false;
    return compareUnordered(a.items, b.items, ctx, false);
  }
  if (a.kind === 'list' || b.kind === 'list') return compareLists(a, b, ctx);
  return compareExpressions(a.latex, b.latex, ctx);
}

function nodeText(n: AnswerNode): string | null {
  if (n.kind === 'text') return n.text.replace(/\s+/g, ' ').trim();
  if (n.kind === 'expr') return n.latex.replace(/\s+/g, '');
  if (n.kind === 'choice') return n.letter;
  return null;
}

function compareRelations(a: AnswerNode, b: AnswerNode, ctx: Ctx): boolean {
  ctx.methods.add('structure');
  const va = relationValue(a);
  const vb = relationValue(b);
  if (a.kind === 'rel' && b.kind === 'rel') {
    if (va && vb && compareNodes(va, vb, ctx)) return true;
    const ia = inequalityAsInterval(a);
    const ib = inequalityAsInterval(b);
    if (ia && ib) return compareNodes(ia, ib, ctx);
    return sameRelation(a, b, ctx);
  }
  // One side is a relation, the other a value.
  const rel = a.kind === 'rel' ? a : b;
  const other = a.kind === 'rel' ? b : a;
  const value = a.kind === 'rel' ? va : vb;
  if (value) return a.kind === 'rel' ? compareNodes(value, other, ctx) : compareNodes(other, value, ctx);
  const interval = inequalityAsInterval(rel);
  if (interval && (other.kind === 'list' || other.kind === 'union')) {
    return a.kind === 'rel' ? compareNodes(interval, other, ctx) : compareNodes(other, interval, ctx);
  }
  return false;
}

/** Equal relations: same sides, or (for = and inequalities) the same after moving terms across. */
function sameRelation(a: AnswerNode & { kind: 'rel' }, b: AnswerNode & { kind: 'rel' }, ctx: Ctx): boolean {
  if (a.ops.length !== b.ops.length) return false;
  // Chains: compare the outer relation (first lhs, last rhs) for equalities.
  if (a.ops.length === 1) {
    const [oa] = a.ops;
    const [ob] = b.ops;
    const [la, ra] = a.sides;
    const [lb, rb] = b.sides;
    if (oa === ob && compareNodes(la, lb, ctx) && compareNodes(ra, rb, ctx)) return true;
    const symmetric = oa === '=' || oa === '≠' || oa === '≈';
    const flipped: Record<string, RelOp> = { '<': '>', '>': '<', '≤': '≥', '≥': '≤' };
    if ((symmetric && oa === ob) || flipped[oa] === ob) {
      if (compareNodes(la, rb, ctx) && compareNodes(ra, lb, ctx)) return true;
    }
    if (la.kind === 'expr' && ra.kind === 'expr' && lb.kind === 'expr' && rb.kind === 'expr') {
      // Move everything to one side: f = lhs - rhs; equations match when f_a = c f_b (c ≠ 0),
      // inequalities when c > 0 after orienting both as "f > 0" / "f ≥ 0".
      const orient = (op: RelOp, l: string, r: string): { f: string; strict: boolean } | null => {
        if (op === '=') return { f: `(${l})-(${r})`, strict: false };
        if (op === '>' || op === '≥') return { f: `(${l})-(${r})`, strict: op === '>' };
        if (op === '<' || op === '≤') return { f: `(${r})-(${l})`, strict: op === '<' };
        return null;
      };
      const fa = orient(oa, la.latex, ra.latex);
      const fb = orient(ob, lb.latex, rb.latex);
      if (!fa || !fb) return false;
      if ((oa === '=') !== (ob === '=') || fa.strict !== fb.strict) return false;
      return proportional(fa.f, fb.f, oa === '=' ? 'any' : 'positive', ctx);
    }
    return false;
  }
  // Longer chains: same operators and pairwise equal sides.
  if (a.ops.join() !== b.ops.join()) return false;
  return a.sides.every((s, i) => compareNodes(s, b.sides[i], ctx));
}

/** Whether f = c·g for a constant c (nonzero; positive when `sign` is 'positive'). */
function proportional(f: string, g: string, sign: 'any' | 'positive', ctx: Ctx): boolean {
  const cf = compileExpression(f);
  const cg = compileExpression(g);
  if (!cf || !cg) return false;
  ctx.methods.add('symbolic');
  let ratio: number | null = null;
  let used = 0;
  for (let k = 0; k < SAMPLE_POINTS; k++) {
    checkTime(ctx);
    const [vf, vg] = valuesAt(cf, cg, k);
    if (!vf || !vg || vf.shape.length > 0 || vg.shape.length > 0) continue;
    if (Math.abs(vf.im[0]) > 1e-9 || Math.abs(vg.im[0]) > 1e-9) continue;
    const x = vf.re[0];
    const y = vg.re[0];
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    if (Math.abs(y) < 1e-12) {
      if (Math.abs(x) < 1e-12) continue;
      return false;
    }
    const r = x / y;
    if (ratio === null) ratio = r;
    else if (Math.abs(r - ratio) > ctx.tol * Math.max(1, Math.abs(ratio))) return false;
    used++;
  }
  if (ratio === null || used === 0 || Math.abs(ratio) < 1e-12) return false;
  return sign === 'any' || ratio > 0;
}

function compareLists(a: AnswerNode, b: AnswerNode, ctx: Ctx): boolean {
  ctx.methods.add('structure');
  if (a.kind !== 'list' || b.kind !== 'list') return false;
  const setLike = (n: { open: string }) => n.open === '' || n.open === '{';
  if (setLike(a) && setLike(b)) {
    const ordered = ctx.ordered && a.open === '' && b.open === '';
    if (ordered)
      return a.items.length === b.items.length && a.items.every((x, i) => compareNodes(x, b.items[i], ctx));
    return compareUnordered(a.items, b.items, ctx, true);
  }
  if (a.open !== b.open || a.close !== b.close) return false;
  if (a.items.length !== b.items.length) return false;
  return a.items.every((x, i) => compareNodes(x, b.items[i], ctx));
}

/** Multiset comparison with duplicates removed (when `dedupe`), by greedy matching. */
function compareUnordered(as: AnswerNode[], bs: AnswerNode[], ctx: Ctx, dedupe: boolean): boolean {
  const da = dedupe ? dedupeNodes(as, ctx) : as;
  const db = dedupe ? dedupeNodes(bs, ctx) : bs;
  if (da.length !== db.length) return false;
  const used = new Array<boolean>(db.length).fill(false);
  for (const x of da) {
    let found = false;
    for (let j = 0; j < db.length; j++) {
      if (!used[j] && compareNodes(x, db[j], ctx)) {
        used[j] = true;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

function dedupeNodes(items: AnswerNode[], ctx: Ctx): AnswerNode[] {
  const out: AnswerNode[] = [];
  for (const x of items) {
    if (!out.some((y) => compareNodes(x, y, ctx))) out.push(x);
  }
  return out;
}

function compareExpressions(ga: string, pb: string, ctx: Ctx): boolean {
  if (ga.replace(/\s+/g, '') === pb.replace(/\s+/g, '') && ctx.goldPercent === ctx.predPercent) {
    ctx.methods.add('string');
    return true;
  }
  const ca = compileExpression(ga);
  const cb = compileExpression(pb);
  if (!ca || !cb) {
    // Not evaluable (sums, integrals, unknown notation): compare canonical forms, else text.
    if (ctx.goldPercent === ctx.predPercent) {
      const canonical = sameCanonicalForm(ga, pb);
      if (canonical !== null) {
        ctx.methods.add('symbolic');
        return canonical;
      }
    }
    ctx.methods.add('string');
    return ga.replace(/\s+/g, '') === pb.replace(/\s+/g, '');
  }
  ctx.methods.add(ca.engine === 'number' && cb.engine === 'number' ? 'number' : 'symbolic');
  // Percent policy: scale candidates for the side that carried a percent sign.
  const scales: Array<[number, number]> = [[1, 1]];
  if (ctx.goldPercent !== ctx.predPercent) {
    if (ctx.percent === 'flexible') scales.push(ctx.goldPercent ? [0.01, 1] : [1, 0.01]);
    else scales.splice(0, 1, ctx.goldPercent ? [0.01, 1] : [1, 0.01]);
  }
  return scales.some(([sa, sb]) => sameValues(ca, cb, sa, sb, ctx));
}

function scale(v: NumericValue, s: number): NumericValue {
  if (s === 1) return v;
  return { re: v.re.map((x) => x * s), im: v.im.map((x) => x * s), shape: v.shape };
}

function sameValues(
  ca: CompiledExpression,
  cb: CompiledExpression,
  sa: number,
  sb: number,
  ctx: Ctx,
): boolean {
  const points = ca.variables.length === 0 && cb.variables.length === 0 ? 1 : SAMPLE_POINTS;
  let compared = 0;
  for (let k = 0; k < points; k++) {
    checkTime(ctx);
    // Exact first: integers of any size, rationals, powers, factorials, scientific notation.
    const ea = ca.exact?.(k) ?? null;
    const eb = cb.exact?.(k) ?? null;
    if (ea !== null && eb !== null) {
      if (!exactEqual(scaleResult(ea, sa), scaleResult(eb, sb))) return false;
      compared++;
      continue;
    }
    const [va, vb] = valuesAt(ca, cb, k);
    if (va === null && vb === null) continue;
    if (va === null || vb === null) return false;
    // Overflow never equals: a non-finite double is only an answer when the side is exactly ±∞,
    // and a side whose exact value is a finite number beyond the double range equals nothing read
    // in doubles.
    // (The precision guard is for constants: at sample points the rationals are artifacts.)
    const ga = ca.variables.length === 0 ? ea : null;
    const gb = cb.variables.length === 0 ? eb : null;
    if (!finiteOrTrueInfinity(va, ga) || !finiteOrTrueInfinity(vb, gb)) return false;
    if (points === 1 && ca.precise && cb.precise) {
      // Constants are decided beyond doubles; doubles only screen out clear differences (within
      // the tolerance, or within a written decimal's half unit).
      const pa = ca.precise();
      const pb = cb.precise();
      const x = scale(va, sa);
      const y = scale(vb, sb);
      // Doubles-only by nature: no high-precision reading on either side (compute-engine
      // notation), or a complex value on a side (e^{iπ} vs −1, √−4 vs 2i): decimal.js is real-only.
      const complex = (v: NumericValue) => v.im.some((t) => t !== 0);
      if ((pa === null && pb === null) || complex(va) || complex(vb)) {
        if (!valuesEqual(x, y, ctx.tol)) return false;
        compared++;
        continue;
      }
      // A written decimal against a rational is judged at its written precision alone; against an
      // irrational value (π, √2) it must also be within the relative tolerance (3.14 ≠ π).
      const rationals = pa !== null && pb !== null && 'exact' in pa && 'exact' in pb;
      const half = rationals ? Math.max(writtenHalf(pa), writtenHalf(pb)) : 0;
      const near =
        valuesEqual(x, y, ctx.tol) ||
        (half > 0 &&
          x.shape.length === 0 &&
          y.shape.length === 0 &&
          Math.abs(x.re[0] - y.re[0]) <= half * 1.01);
      if (!near) return false;
      // A constant that cannot be evaluated beyond doubles is not called equal on doubles alone.
      if (pa === null || pb === null || !preciseEqual(pa, pb, sa, sb)) return false;
      compared++;
      continue;
    }
    if (!valuesEqual(scale(va, sa), scale(vb, sb), ctx.tol)) return false;
    compared++;
  }
  return compared > 0;
}

/** ½·10^−d for a side that is a written decimal with d digits after the point, else 0. */
function writtenHalf(p: PreciseValue | null): number {
  return p !== null && 'exact' in p && p.exact.decimal ? 0.5 * 10 ** -(p.exact.decimals ?? 0) : 0;
}

/**
 * Two constants compared beyond doubles: exactly when both are rationals; otherwise with decimal.js
 * at PRECISE_DIGITS significant digits plus the digits of the integer part (so the resolution is
 * 10^−(PRECISE_DIGITS−20) whatever the size: `e^{100}` ≠ `e^{100}+1`). A written decimal matches
 * what rounds to it (|x − y| ≤ ½·10^−d, less the evaluation error); other values must agree to
 * the resolution.
 */
function preciseEqual(pa: PreciseValue, pb: PreciseValue, sa: number, sb: number): boolean {
  if ('exact' in pa && 'exact' in pb) return exactEqual(scaleResult(pa.exact, sa), scaleResult(pb.exact, sb));
  const at = (precision: number): [DecimalCtor, DecimalCtor] | null => {
    const D = decimalAt(precision);
    const one = (p: PreciseValue, s: number) => {
      const v =
        'exact' in p
          ? p.exact.value.kind === 'rational'
            ? new D(p.exact.value.n.toString()).div(p.exact.value.d.toString())
            : null
          : p.digits(precision);
      return v === null ? null : s === 1 ? v : v.times(s);
    };
    const x = one(pa, sa);
    const y = one(pb, sb);
    return x === null || y === null ? null : [x, y];
  };
  let pair = at(PRECISE_DIGITS);
  if (pair === null) return false;
  const magnitude = Math.max(pair[0].e, pair[1].e, 0);
  let precision = PRECISE_DIGITS;
  if (magnitude > 0) {
    precision += magnitude;
    if (precision > 2000) return false;
    pair = at(precision);
    if (pair === null) return false;
  }
  const [x, y] = pair;
  const D = decimalAt(precision);
  const diff = x.minus(y).abs();
  const error = D.max(x.abs(), y.abs(), 1).times(new D(10).pow(-(precision - 20)));
  const d =
    'exact' in pa && pa.exact.decimal
      ? (scaleResult(pa.exact, sa).decimals ?? 0)
      : 'exact' in pb && pb.exact.decimal
        ? (scaleResult(pb.exact, sb).decimals ?? 0)
        : null;
  if (d === null) return diff.lte(error);
  return diff.lte(new D(10).pow(-d).div(2).minus(error));
}

function scaleResult(r: ExactResult, s: number): ExactResult {
  if (s === 1) return r;
  // A percent moves the written precision two places: 33.3% stands for 0.333.
  return {
    value: scaleExact(r.value, 1n, BigInt(Math.round(1 / s))),
    decimal: r.decimal,
    ...(r.decimal ? { decimals: (r.decimals ?? 0) + Math.round(Math.log10(1 / s)) } : {}),
  };
}

/** A double read of a side is usable: finite, or ±∞ where the exact reading is that infinity. */
function finiteOrTrueInfinity(v: NumericValue, exact: ExactResult | null): boolean {
  const finite = v.re.every(Number.isFinite) && v.im.every(Number.isFinite);
  if (exact !== null && exact.value.kind === 'rational' && !withinDoublePrecision(exact)) return false;
  if (finite) return true;
  return exact !== null && exact.value.kind === 'infinity';
}

const DOUBLE_INTEGERS = 2n ** 53n;

/**
 * An exact rational that doubles can tell from its neighbours: numerator and denominator below
 * 2^53 (or a decimal by nature, which is a rounding anyway). Beyond that a double-only reading of
 * the other side cannot decide, so the pair is "not equal" (`\sqrt{2}^{120}` vs `2^{60}+1`).
 */
function withinDoublePrecision(exact: ExactResult): boolean {
  const x = exact.value;
  if (x.kind !== 'rational') return true;
  if (!Number.isFinite(toNumber(x))) return false;
  if (exact.decimal) return true;
  const n = x.n < 0n ? -x.n : x.n;
  return n <= DOUBLE_INTEGERS && x.d <= DOUBLE_INTEGERS;
}
