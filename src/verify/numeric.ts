/**
 * Numeric evaluation of expressions for equivalence checks: exact-number fast path, then mathjs
 * evaluation of our own LaTeX translation at deterministic sample points, then (for LaTeX our
 * parser rejects) @cortex-js/compute-engine with the same numeric substitution. Engines are
 * created lazily, once per process; compiled expressions are cached.
 */
import { createRequire } from 'node:module';
import {
  compileDecimal,
  compileExact,
  type DecimalCtor,
  type ExactResult,
  type ExactValue,
  isUnsupported,
  plainExact,
  rationalOfNumber,
} from './exact.js';
import { compileFast, type FastFunction } from './fast-eval.js';
import { LatexParseError, latexToMathjs } from './latex.js';

const require = createRequire(import.meta.url);

/** A flat numeric value: complex entries plus a shape (`[]` for a scalar). */
export interface NumericValue {
  re: number[];
  im: number[];
  shape: number[];
}

/** A compiled expression: evaluate at sample point k (0-based). Returns null when undefined there. */
export interface CompiledExpression {
  engine: 'number' | 'mathjs' | 'compute-engine';
  variables: string[];
  /** Full evaluation (complex numbers, matrices). */
  evaluate(point: number): NumericValue | null;
  /**
   * Real-valued plain-JavaScript evaluation (scalars and matrix literals); absent when the
   * expression needs the full engine; null at a point where it is not a real number.
   */
  fast?: (point: number) => NumericValue | null;
  /**
   * Exact value at sample point k (BigInt rationals, variables at the exact rational sample
   * values); absent or null where the expression is not exact (pi, irrational roots, too large).
   */
  exact?: (point: number) => ExactResult | null;
  /**
   * A constant's value beyond doubles: exact (a rational, with its written decimals), or a
   * 120-significant-digit BigNumber (π, e, irrational roots, logarithms, trigonometry); null when
   * it cannot be evaluated that way (complex values, compute-engine notation). Absent for
   * expressions with variables.
   */
  precise?: () => PreciseValue | null;
}

/**
 * See {@link CompiledExpression.precise}: an exact rational, or an evaluator giving the value as a
 * decimal.js number at a requested number of significant digits (null where it is not finite and
 * real, or cannot be had at that precision).
 */
// biome-ignore lint/suspicious/noExplicitAny: decimal.js values.
export type PreciseValue = { exact: ExactResult } | { digits: (precision: number) => any };

/** Significant digits of the high-precision evaluation of constants (more for large values). */
export const PRECISE_DIGITS = 60;

const decimalCtors = new Map<number, DecimalCtor>();

/** A decimal.js constructor working at `precision` significant digits. */
export function decimalAt(precision: number): DecimalCtor {
  let D = decimalCtors.get(precision);
  if (D === undefined) {
    D = require('decimal.js').clone({ precision, rounding: 4, toExpPos: 9e15, toExpNeg: -9e15 });
    if (decimalCtors.size > 64) decimalCtors.clear();
    decimalCtors.set(precision, D);
  }
  return D;
}

// biome-ignore lint/suspicious/noExplicitAny: mathjs instance with BigNumber numbers.
let bigInstance: any = null;

/** mathjs with BigNumbers at {@link PRECISE_DIGITS} digits, for notation our evaluator does not cover. */
// biome-ignore lint/suspicious/noExplicitAny: see above.
function mathBig(): any {
  if (bigInstance) return bigInstance;
  const started = Date.now();
  const mathjs = require('mathjs');
  const m = mathjs.create(mathjs.all, { number: 'BigNumber', precision: PRECISE_DIGITS });
  // mathjs loops n times for factorial(n) and k times for combinations(n, k): refused here.
  const refuse = () => {
    throw new Error('not evaluated at high precision');
  };
  m.import({ factorial: refuse, combinations: refuse, gamma: refuse }, { override: true });
  bigInstance = m;
  engineLoadMs += Date.now() - started;
  return m;
}

/**
 * A constant mathjs source as a high-precision evaluator: our decimal.js evaluator at any
 * precision, or (notation it does not cover) mathjs BigNumbers at {@link PRECISE_DIGITS} digits
 * only, trusted for values below 1e20 (the caller's bound then resolves 1e−20).
 */
function preciseEvaluator(source: string): ((precision: number) => DecimalCtor | null) | null {
  const f = compileDecimal(source);
  return (precision: number) => {
    if (f !== null) {
      try {
        return f(decimalAt(precision));
      } catch (err) {
        if (!isUnsupported(err)) return null;
      }
    }
    if (precision !== PRECISE_DIGITS) return null;
    const v = evaluateBig(source);
    return v === null || v.abs().gte('1e20') ? null : new (decimalAt(precision))(v.toString());
  };
}

/** A constant mathjs source evaluated at {@link PRECISE_DIGITS} digits: a finite real BigNumber, or null. */
// biome-ignore lint/suspicious/noExplicitAny: a BigNumber.
function evaluateBig(source: string): any {
  try {
    const m = mathBig();
    const v = m.evaluate(source);
    return m.isBigNumber(v) && v.isFinite() ? v : null;
  } catch {
    return null;
  }
}

/**
 * Values of two expressions at sample point k: the plain-JavaScript path when both sides have it
 * and give real numbers, otherwise the full engines for both (so both sides use one semantics).
 */
export function valuesAt(
  a: CompiledExpression,
  b: CompiledExpression,
  point: number,
): [NumericValue | null, NumericValue | null] {
  if (a.fast && b.fast) {
    const x = a.fast(point);
    const y = b.fast(point);
    if (x !== null && y !== null) return [x, y];
  }
  return [a.evaluate(point), b.evaluate(point)];
}

/** Number of sample points at which expressions with variables are compared. */
export const SAMPLE_POINTS = 4;

// biome-ignore lint/suspicious/noExplicitAny: mathjs instance type is large; used through a narrow surface.
let mathInstance: any = null;

let engineLoadMs = 0;

/**
 * Milliseconds spent so far loading the math engines (once per process). Comparisons do not count
 * this one-off cost against their time cap.
 */
export function engineLoadTime(): number {
  return engineLoadMs;
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
function math(): any {
  if (mathInstance) return mathInstance;
  const started = Date.now();
  const mathjs = require('mathjs');
  const m = mathjs.create(mathjs.all, { number: 'number', precision: 64 });
  const lgamma = (x: number) => m.lgamma(x) as number;
  m.import(
    {
      // mathjs loops k times for combinations(n, k) and n times for factorial(n): unbounded on
      // inputs like \binom{10^9}{5\cdot10^8}. These versions cost O(1) beyond small arguments.
      combinations: (n: unknown, k: unknown) => {
        if (typeof n !== 'number' || typeof k !== 'number') return Number.NaN;
        if (Number.isInteger(n) && Number.isInteger(k) && k >= 0 && n >= k && k <= 200) {
          let r = 1;
          for (let j = 1; j <= k; j++) r = (r * (n - k + j)) / j;
          return Math.round(r);
        }
        return Math.exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1));
      },
      factorial: (n: unknown) => {
        if (typeof n !== 'number' || n < 0) return Number.NaN;
        if (n > 170) return Number.POSITIVE_INFINITY;
        return m.gamma(n + 1);
      },
      // Real n-th root for negative radicands with odd integer index, principal root otherwise.
      nroot: (x: unknown, n: unknown) => {
        if (typeof x === 'number' && typeof n === 'number') {
          if (x < 0 && Number.isInteger(n) && n % 2 !== 0) return -((-x) ** (1 / n));
          if (x >= 0) return x ** (1 / n);
        }
        return m.pow(x, m.divide(1, n));
      },
    },
    { override: true },
  );
  mathInstance = m;
  engineLoadMs += Date.now() - started;
  return m;
}

// biome-ignore lint/suspicious/noExplicitAny: compute-engine instance.
let computeEngine: any = null;

/**
 * compute-engine reports inputs it cannot canonicalise with `console.error` and then returns an
 * invalid expression, which we already treat as "cannot decide". Those lines are noise in a
 * grading job's log (dozens per thousand answers), so they are dropped; every other console.error
 * passes through untouched.
 */
function silenceComputeEngineLogs(): void {
  const original = console.error;
  console.error = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('ComputeEngine:')) return;
    original(...args);
  };
}

// biome-ignore lint/suspicious/noExplicitAny: compute-engine instance.
function ce(): any {
  if (computeEngine) return computeEngine;
  const started = Date.now();
  silenceComputeEngineLogs();
  const { ComputeEngine } = require('@cortex-js/compute-engine');
  const engine = new ComputeEngine();
  // The first parse and evaluation initialise its dictionaries: part of the one-off load.
  engine
    .parse('\\frac{x}{2}+\\sin(x)')
    .subs({ x: engine.number(1) })
    .N();
  engine.parse('\\sum_{k=0}^{n-1} F_k F_{n-k}').isSame(engine.parse('\\sum_{k=0}^{n} k'));
  computeEngine = engine;
  engineLoadMs += Date.now() - started;
  return computeEngine;
}

/**
 * Load both math engines now (about 1-3 s once per process) instead of on the first comparison
 * that needs them. Useful before timing-sensitive work; comparisons never count this load against
 * their time cap anyway.
 */
export function warmUpEngines(): void {
  math().compile('x + 1').evaluate({ x: 1 });
  decimalAt(PRECISE_DIGITS).acos(-1).sqrt();
  ce();
}

/** Deterministic sample value for a variable at a point: in [1.3, 3.3], distinct across names. */
export function sampleValue(name: string, point: number): number {
  let h = 2166136261 >>> 0;
  const key = `${name}#${point}`;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return 1.3 + (h % 100000) / 50000;
}

/** Parse a plain number written as an integer, decimal, `a/b`, `\frac{a}{b}` or mixed `3\frac{1}{2}`. */
export function parsePlainNumber(s: string): number | null {
  // Mixed number written with a space: 7 3/4 is 7 + 3/4.
  const mixed = /^\s*([-+]?)(\d+)\s+(\d+)\s*\/\s*(\d+)\s*$/.exec(s);
  if (mixed) return (mixed[1] === '-' ? -1 : 1) * (Number(mixed[2]) + Number(mixed[3]) / Number(mixed[4]));
  const t = s.replace(/\s+/g, '');
  let m = /^([-+]?)(\d+\.?\d*|\.\d+)(?:[eE]([-+]?\d+))?$/.exec(t);
  if (m) return Number(`${m[1]}${m[2]}${m[3] !== undefined ? `e${m[3]}` : ''}`);
  m = /^([-+]?)(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(t);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) / Number(m[3]));
  m = /^([-+]?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}$/.exec(t);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) / Number(m[3]));
  m = /^([-+]?)\\frac(\d)(\d)$/.exec(t);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) / Number(m[3]));
  m = /^([-+]?)(\d+)\\frac\{(\d+)\}\{(\d+)\}$/.exec(t);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) + Number(m[3]) / Number(m[4]));
  return null;
}

/**
 * Where doubles cannot be trusted to tell two values apart: 16+ digit numbers, powers, factorials,
 * binomials, exponents of 3+ digits, infinity. Only such answers are evaluated exactly.
 */
const EXACT_NEEDED = /\d{16,}|\^|!|factorial|combinations|[eE][-+]?\d{3,}|Infinity|infty/;

const CACHE_LIMIT = 5000;
const cache = new Map<string, CompiledExpression | null>();
/** Lookups of the parse caches (compiled expressions and canonical forms): hits and misses. */
const cacheCounts = { hits: 0, misses: 0 };

/** Hits and misses of the parse caches since the last {@link clearParseCaches}. */
export function parseCacheStats(): { hits: number; misses: number } {
  return { ...cacheCounts };
}

/** Empty the parse caches and their counts (bench/verify.ts: every case parsed afresh). */
export function clearParseCaches(): void {
  cache.clear();
  canonicalCache.clear();
  cacheCounts.hits = 0;
  cacheCounts.misses = 0;
}

/** Compile an expression (cached). Returns null when no engine can read it. */
export function compileExpression(latex: string): CompiledExpression | null {
  const hit = cache.get(latex);
  if (hit !== undefined) {
    cacheCounts.hits++;
    return hit;
  }
  cacheCounts.misses++;
  const compiled = compileUncached(latex);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(latex, compiled);
  return compiled;
}

/** Remember each sample-point value: the same answers recur across a grading run. */
function memoize(c: CompiledExpression): CompiledExpression {
  const values: Array<NumericValue | null | undefined> = [];
  const fastValues: Array<NumericValue | null | undefined> = [];
  const fast = c.fast;
  const exact = c.exact;
  const exactValues: Array<ExactResult | null | undefined> = [];
  let preciseValue: PreciseValue | null | undefined;
  const precise = c.precise;
  return {
    engine: c.engine,
    variables: c.variables,
    precise:
      precise === undefined
        ? undefined
        : () => {
            if (preciseValue === undefined) preciseValue = precise();
            return preciseValue;
          },
    exact:
      exact === undefined
        ? undefined
        : (point: number) => {
            let v = exactValues[point];
            if (v === undefined) {
              v = exact(point);
              exactValues[point] = v;
            }
            return v;
          },
    evaluate(point: number): NumericValue | null {
      let v = values[point];
      if (v === undefined) {
        v = c.evaluate(point);
        values[point] = v;
      }
      return v;
    },
    fast:
      fast === undefined
        ? undefined
        : (point: number) => {
            let v = fastValues[point];
            if (v === undefined) {
              v = fast(point);
              fastValues[point] = v;
            }
            return v;
          },
  };
}

function compileUncached(latex: string): CompiledExpression | null {
  const c = compileFresh(latex);
  return c === null || c.engine === 'number' ? c : memoize(c);
}

function compileFresh(latex: string): CompiledExpression | null {
  const plain = parsePlainNumber(latex);
  if (plain !== null) {
    const value: NumericValue = { re: [plain], im: [0], shape: [] };
    let exact: ExactResult | null | undefined;
    return {
      engine: 'number',
      variables: [],
      evaluate: () => value,
      fast: () => value,
      precise: () => {
        const e = plainExact(latex);
        return e === null ? null : { exact: e };
      },
      // Integers and fractions of integers are always exact (100000001 ≠ 100000000); plain
      // decimals are read exactly only when they are long.
      ...(EXACT_NEEDED.test(latex) || !/[.eE]/.test(latex)
        ? {
            exact: () => {
              exact ??= plainExact(latex);
              return exact;
            },
          }
        : {}),
    };
  }
  try {
    const { source, variables, matrix } = latexToMathjs(latex);
    const scopeAt = (point: number): Record<string, number> => {
      const scope: Record<string, number> = {};
      for (const v of variables) scope[v] = sampleValue(v, point);
      return scope;
    };
    const fastFn = compileFastValue(source, matrix);
    // Exact arithmetic only where doubles can go wrong (long integers, powers, factorials, huge
    // exponents, infinity): other answers keep the plain-JavaScript speed (bench/verify-exact.ts).
    const exactFn = matrix || !EXACT_NEEDED.test(source) ? null : compileExact(source);
    const exactScope =
      (point: number) =>
      (name: string): ExactValue | null =>
        variables.includes(name) ? rationalOfNumber(sampleValue(name, point)) : null;
    // biome-ignore lint/suspicious/noExplicitAny: mathjs compiled expression.
    let code: any = null;
    let codeError = false;
    return {
      engine: 'mathjs',
      variables,
      exact: exactFn === null ? undefined : (point: number) => exactFn(exactScope(point)),
      precise:
        variables.length > 0 || matrix
          ? undefined
          : () => {
              const e = (exactFn ?? compileExact(source))?.(() => null) ?? null;
              if (e !== null) return { exact: e };
              const digits = preciseEvaluator(source);
              return digits === null ? null : { digits };
            },
      evaluate(point: number): NumericValue | null {
        if (codeError) return null;
        try {
          // mathjs is loaded and the expression compiled only when the fast path cannot decide.
          code ??= math().compile(source);
          return toNumeric(code.evaluate(scopeAt(point)));
        } catch {
          if (code === null) codeError = true;
          return null;
        }
      },
      fast:
        fastFn === null
          ? undefined
          : (point: number) => {
              try {
                return fastFn(scopeAt(point));
              } catch {
                return null;
              }
            },
    };
  } catch (err) {
    // Only notation we do not know goes to the (slow) compute engine; malformed input stays unread.
    if (err instanceof LatexParseError && err.unsupported) return compileWithComputeEngine(latex);
    return null;
  }
}

/** A plain-JavaScript evaluator for a scalar expression or a matrix literal, or null. */
function compileFastValue(
  source: string,
  matrix: string[][] | undefined,
): ((scope: Record<string, number>) => NumericValue | null) | null {
  if (matrix) {
    const cells: FastFunction[] = [];
    for (const row of matrix) {
      for (const entry of row) {
        const f = compileFast(entry);
        if (!f) return null;
        cells.push(f);
      }
    }
    const shape = [matrix.length, matrix[0].length];
    return (scope) => {
      const re = cells.map((f) => f(scope));
      if (re.some((x) => Number.isNaN(x))) return null;
      return { re, im: re.map(() => 0), shape };
    };
  }
  const f = compileFast(source);
  if (!f) return null;
  return (scope) => {
    const x = f(scope);
    return Number.isNaN(x) ? null : { re: [x], im: [0], shape: [] };
  };
}

/**
 * Structural equality of compute-engine's canonical forms (operands of sums and products sorted,
 * constants folded): for answers that numeric substitution cannot evaluate, such as sums with
 * symbolic bounds. Null when the inputs are not safe or not valid for compute-engine.
 */
export function sameCanonicalForm(a: string, b: string): boolean | null {
  if (!safeForComputeEngine(a) || !safeForComputeEngine(b)) return null;
  const ea = canonicalForm(a);
  const eb = canonicalForm(b);
  if (ea === null || eb === null) return null;
  try {
    return Boolean(ea.isSame(eb));
  } catch {
    return null;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: compute-engine expression.
const canonicalCache = new Map<string, any>();

/** compute-engine's canonical parse of an answer (cached), or null when invalid. */
// biome-ignore lint/suspicious/noExplicitAny: compute-engine expression.
function canonicalForm(latex: string): any {
  const hit = canonicalCache.get(latex);
  if (hit !== undefined) {
    cacheCounts.hits++;
    return hit;
  }
  cacheCounts.misses++;
  let expr = null;
  try {
    const parsed = ce().parse(latex);
    expr = parsed.isValid ? parsed : null;
  } catch {
    expr = null;
  }
  if (canonicalCache.size >= CACHE_LIMIT) canonicalCache.clear();
  canonicalCache.set(latex, expr);
  return expr;
}

/** Fallback for LaTeX our parser rejects: compute-engine parse, then numeric substitution. */
/**
 * Whether an input is tame enough for compute-engine, whose calls cannot be interrupted: short,
 * printable ASCII, balanced braces, few and small exponents.
 */
function safeForComputeEngine(latex: string): boolean {
  if (latex.length > 200 || !/^[\x20-\x7e]*$/.test(latex)) return false;
  let depth = 0;
  for (let i = 0; i < latex.length; i++) {
    const ch = latex[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth < 0) return false;
  }
  if (depth !== 0) return false;
  if ((latex.match(/\^/g) ?? []).length > 3 || /\^\s*\{?[^}]*\d{3,}/.test(latex)) return false;
  if (/\d{7,}|!/.test(latex)) return false;
  return true;
}

function compileWithComputeEngine(latex: string): CompiledExpression | null {
  if (!safeForComputeEngine(latex)) return null;
  // Sums, products, integrals and limits with symbolic bounds do not survive numeric substitution
  // (and cost hundreds of milliseconds there): such answers are compared as text.
  if (
    latex.length > 500 ||
    /\\\\(?!\s*\\end)|\\begin|\\(?:sum|prod|int|iint|oint|lim)(?![a-zA-Z])/.test(latex)
  )
    return null;
  try {
    const engine = ce();
    const expr = engine.parse(latex);
    if (!expr.isValid) return null;
    const unknowns: string[] = [...(expr.unknowns ?? [])];
    return {
      engine: 'compute-engine',
      variables: unknowns.map((u) => `v_${u}`),
      evaluate(point: number): NumericValue | null {
        try {
          const subs: Record<string, unknown> = {};
          for (const u of unknowns) subs[u] = engine.number(sampleValue(`v_${u}`, point));
          const value = expr.subs(subs).N();
          const re = Number(value.re);
          const im = Number(value.im ?? 0);
          if (Number.isNaN(re)) return null;
          return { re: [re], im: [Number.isNaN(im) ? 0 : im], shape: [] };
        } catch {
          return null;
        }
      },
    };
  } catch {
    return null;
  }
}

function toNumeric(v: unknown): NumericValue | null {
  if (typeof v === 'number') return Number.isNaN(v) ? null : { re: [v], im: [0], shape: [] };
  if (typeof v === 'boolean') return { re: [v ? 1 : 0], im: [0], shape: [] };
  if (v && typeof v === 'object') {
    const o = v as { re?: unknown; im?: unknown; toArray?: () => unknown; size?: () => number[] };
    if (typeof o.re === 'number' && typeof o.im === 'number') {
      if (Number.isNaN(o.re) || Number.isNaN(o.im)) return null;
      return { re: [o.re], im: [o.im], shape: [] };
    }
    if (typeof o.toArray === 'function' && typeof o.size === 'function') {
      const flat = (o.toArray() as unknown[]).flat(Number.POSITIVE_INFINITY) as unknown[];
      const re: number[] = [];
      const im: number[] = [];
      for (const x of flat) {
        const n = toNumeric(x);
        if (!n || n.shape.length > 0) return null;
        re.push(n.re[0]);
        im.push(n.im[0]);
      }
      return { re, im, shape: o.size() };
    }
  }
  return null;
}

/** Whether two scalars agree within relative tolerance `tol` (infinities must match exactly). */
export function closeEnough(a: number, b: number, tol: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= tol * Math.max(Math.abs(a), Math.abs(b)) + 1e-12;
}

/** Whether two numeric values are equal entry by entry (same shape). */
export function valuesEqual(a: NumericValue, b: NumericValue, tol: number): boolean {
  if (a.shape.join('x') !== b.shape.join('x') || a.re.length !== b.re.length) return false;
  for (let i = 0; i < a.re.length; i++) {
    if (!closeEnough(a.re[i], b.re[i], tol) || !closeEnough(a.im[i], b.im[i], tol)) {
      // Compare the imaginary parts relative to the whole magnitude (rounding noise in i-parts).
      const mag = Math.max(Math.hypot(a.re[i], a.im[i]), Math.hypot(b.re[i], b.im[i]));
      const d = Math.hypot(a.re[i] - b.re[i], a.im[i] - b.im[i]);
      if (!(Number.isFinite(d) && d <= tol * mag + 1e-12)) return false;
    }
  }
  return true;
}
