/**
 * Exact values of constant answers: integers of any size, rationals, powers, factorials, binomials
 * and scientific notation evaluated with BigInt fractions, so that `2^{1000}` and `2^{1000}+1`, or
 * `1e400` and `2e400`, are told apart where doubles round them to the same number (or to
 * Infinity). The input is the mathjs-syntax source our LaTeX translation emits (src/verify/latex.ts);
 * anything outside the exact fragment (pi, e, sqrt of a non-square, unknown functions) gives null and
 * the comparison falls back to floating point.
 */

/** An exact rational n/d (d > 0, lowest terms) or a signed infinity (written `\infty`). */
export type ExactValue = { kind: 'rational'; n: bigint; d: bigint } | { kind: 'infinity'; sign: 1 | -1 };

/** An exact value and whether the answer is a decimal by nature (a rounded value: tolerance applies). */
export interface ExactResult {
  value: ExactValue;
  /**
   * The whole answer is one decimal literal with digits after the point, outside scientific
   * notation (`0.0833`, `-2.50`; not `1.5e3`, not `1.5^{2}`): a rounded value.
   */
  decimal: boolean;
  /** Digits written after the point when `decimal` (its precision: it stands for ±½·10^−decimals). */
  decimals?: number;
}

/** Values larger than this many bits are not built (a `10^{10^9}` must not take the process down). */
const MAX_BITS = 100_000;
/** Largest factorial argument evaluated exactly (1000! has 2,568 digits). */
const MAX_FACTORIAL = 3000;

class NotExact extends Error {}

const ZERO: ExactValue = { kind: 'rational', n: 0n, d: 1n };

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function bits(x: bigint): number {
  return x === 0n ? 0 : abs(x).toString(16).length * 4;
}

export function rational(n: bigint, d: bigint = 1n): ExactValue {
  if (d === 0n) throw new NotExact('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d);
  const r: ExactValue = g > 1n ? { kind: 'rational', n: n / g, d: d / g } : { kind: 'rational', n, d };
  if (bits(r.n) > MAX_BITS || bits(r.d) > MAX_BITS) throw new NotExact('too large');
  return r;
}

function isZero(x: ExactValue): boolean {
  return x.kind === 'rational' && x.n === 0n;
}

function sign(x: ExactValue): number {
  if (x.kind === 'infinity') return x.sign;
  return x.n === 0n ? 0 : x.n < 0n ? -1 : 1;
}

function neg(x: ExactValue): ExactValue {
  return x.kind === 'infinity' ? { kind: 'infinity', sign: x.sign === 1 ? -1 : 1 } : rational(-x.n, x.d);
}

function add(a: ExactValue, b: ExactValue): ExactValue {
  if (a.kind === 'infinity' || b.kind === 'infinity') {
    if (a.kind === 'infinity' && b.kind === 'infinity' && a.sign !== b.sign) throw new NotExact('∞ − ∞');
    return a.kind === 'infinity' ? a : b;
  }
  return rational(a.n * b.d + b.n * a.d, a.d * b.d);
}

function mul(a: ExactValue, b: ExactValue): ExactValue {
  if (a.kind === 'infinity' || b.kind === 'infinity') {
    const s = sign(a) * sign(b);
    if (s === 0) throw new NotExact('0 · ∞');
    return { kind: 'infinity', sign: s > 0 ? 1 : -1 };
  }
  return rational(a.n * b.n, a.d * b.d);
}

function inv(a: ExactValue): ExactValue {
  if (a.kind === 'infinity') return ZERO;
  return rational(a.d, a.n);
}

/** Integer k-th root of a non-negative integer when it is exact, else null. */
function exactRoot(x: bigint, k: number): bigint | null {
  if (x < 0n) return null;
  if (x < 2n) return x;
  // Newton's method from an upper bound.
  const kb = BigInt(k);
  let r = 1n << BigInt(Math.ceil(bits(x) / k) + 1);
  for (;;) {
    const next = ((kb - 1n) * r + x / r ** (kb - 1n)) / kb;
    if (next >= r) break;
    r = next;
  }
  return r ** kb === x ? r : null;
}

/** x^(1/k) for a rational x when exact (odd k takes negative radicands), else not exact. */
function root(x: ExactValue, k: number): ExactValue {
  if (x.kind === 'infinity') {
    if (x.sign < 0 && k % 2 === 0) throw new NotExact('even root of −∞');
    return x;
  }
  if (!Number.isInteger(k) || k < 1 || k > 64) throw new NotExact('root index');
  const negative = x.n < 0n;
  if (negative && k % 2 === 0) throw new NotExact('even root of a negative number');
  const n = exactRoot(abs(x.n), k);
  const d = exactRoot(x.d, k);
  if (n === null || d === null) throw new NotExact('irrational root');
  return rational(negative ? -n : n, d);
}

function pow(base: ExactValue, exponent: ExactValue): ExactValue {
  if (exponent.kind === 'infinity') throw new NotExact('infinite exponent');
  if (exponent.d !== 1n) {
    // x^(p/q): exact only when x is a perfect q-th power.
    if (exponent.d > 64n) throw new NotExact('root index');
    return pow(root(base, Number(exponent.d)), rational(exponent.n));
  }
  const e = exponent.n;
  if (base.kind === 'infinity') {
    if (e === 0n) throw new NotExact('∞^0');
    if (e < 0n) return ZERO;
    return { kind: 'infinity', sign: base.sign > 0 || e % 2n === 0n ? 1 : -1 };
  }
  if (e === 0n) {
    if (base.n === 0n) throw new NotExact('0^0');
    return rational(1n);
  }
  const b = e < 0n ? inv(base) : base;
  if (b.kind !== 'rational') throw new NotExact('power');
  const ae = abs(e);
  const size = Math.max(bits(b.n), bits(b.d));
  // |b| ∈ {0, 1}: any power is exact and small.
  if (size > 1 && BigInt(size - 1) * ae > BigInt(MAX_BITS)) throw new NotExact('too large');
  return rational(b.n ** ae, b.d ** ae);
}

function integerOf(x: ExactValue): bigint {
  if (x.kind !== 'rational' || x.d !== 1n) throw new NotExact('not an integer');
  return x.n;
}

function factorial(x: ExactValue): ExactValue {
  const n = integerOf(x);
  if (n < 0n || n > BigInt(MAX_FACTORIAL)) throw new NotExact('factorial range');
  let r = 1n;
  for (let k = 2n; k <= n; k++) r *= k;
  return rational(r);
}

function binomial(nv: ExactValue, kv: ExactValue): ExactValue {
  const n = integerOf(nv);
  let k = integerOf(kv);
  if (k < 0n || n < 0n) throw new NotExact('binomial range');
  if (k > n) return ZERO;
  if (n - k < k) k = n - k;
  if (k > BigInt(MAX_FACTORIAL)) throw new NotExact('binomial range');
  let r = 1n;
  for (let j = 1n; j <= k; j++) r = (r * (n - k + j)) / j;
  return rational(r);
}

function floorOf(x: ExactValue, up: boolean): ExactValue {
  if (x.kind === 'infinity') return x;
  let q = x.n / x.d; // truncates toward zero
  if (q * x.d !== x.n) {
    if (x.n < 0n && !up) q -= 1n;
    if (x.n > 0n && up) q += 1n;
  }
  return rational(q);
}

/** A parsed literal: its exact value, and whether it is written as a decimal with a fractional part. */
function literal(text: string): {
  value: ExactValue;
  decimal: boolean;
  decimals: number;
  scientific: boolean;
} {
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text);
  if (!m) throw new NotExact('number');
  const whole = m[1] ?? '';
  const frac = m[2] ?? '';
  const digits = BigInt(`${whole}${frac}` || '0');
  let exp = -frac.length;
  if (m[3] !== undefined) {
    const e = Number(m[3]);
    if (!Number.isSafeInteger(e) || Math.abs(e) > MAX_BITS) throw new NotExact('exponent');
    exp += e;
  }
  if (Math.abs(exp) * 3.33 > MAX_BITS) throw new NotExact('too large');
  const value = exp >= 0 ? rational(digits * 10n ** BigInt(exp)) : rational(digits, 10n ** BigInt(-exp));
  const decimal = /[1-9]/.test(frac) && m[3] === undefined;
  return { value, decimal, decimals: decimal ? frac.length : 0, scientific: m[3] !== undefined };
}

type Node =
  | { t: 'num'; text: string }
  | { t: 'inf' }
  | { t: 'var'; name: string }
  | { t: 'neg'; x: Node }
  | { t: 'bin'; op: '+' | '-' | '*' | '/' | '^'; a: Node; b: Node }
  | { t: 'call'; name: string; args: Node[] };

const TOKEN =
  /\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/^(),]))/y;

/** Recursive-descent parser for the mathjs subset emitted by latexToMathjs (mathjs precedence). */
class Parser {
  private tokens: Array<{ num?: string; id?: string; sym?: string }> = [];
  private i = 0;

  constructor(source: string) {
    let at = 0;
    for (;;) {
      // Skip blanks by character code: no slicing, linear in the source.
      while (at < source.length && source.charCodeAt(at) <= 32) at++;
      if (at >= source.length) break;
      TOKEN.lastIndex = at;
      const m = TOKEN.exec(source);
      if (!m) throw new NotExact(`unknown token at ${at}`);
      this.tokens.push({ num: m[1], id: m[2], sym: m[3] });
      at = TOKEN.lastIndex;
      if (this.tokens.length > 4000) throw new NotExact('too long');
    }
  }

  parse(): Node {
    const n = this.expr(0);
    if (this.i !== this.tokens.length) throw new NotExact('trailing input');
    return n;
  }

  private peek(sym: string): boolean {
    return this.tokens[this.i]?.sym === sym;
  }

  private expect(sym: string): void {
    if (!this.peek(sym)) throw new NotExact(`expected ${sym}`);
    this.i++;
  }

  private expr(depth: number): Node {
    if (depth > 120) throw new NotExact('too deep');
    let a = this.term(depth);
    while (this.peek('+') || this.peek('-')) {
      const op = this.tokens[this.i++].sym as '+' | '-';
      a = { t: 'bin', op, a, b: this.term(depth) };
    }
    return a;
  }

  private term(depth: number): Node {
    let a = this.unary(depth);
    while (this.peek('*') || this.peek('/')) {
      const op = this.tokens[this.i++].sym as '*' | '/';
      a = { t: 'bin', op, a, b: this.unary(depth) };
    }
    return a;
  }

  private unary(depth: number): Node {
    if (this.peek('-')) {
      this.i++;
      return { t: 'neg', x: this.unary(depth + 1) };
    }
    if (this.peek('+')) {
      this.i++;
      return this.unary(depth + 1);
    }
    return this.power(depth);
  }

  private power(depth: number): Node {
    const base = this.primary(depth);
    if (this.peek('^')) {
      this.i++;
      return { t: 'bin', op: '^', a: base, b: this.unary(depth + 1) };
    }
    return base;
  }

  private primary(depth: number): Node {
    const tok = this.tokens[this.i++];
    if (!tok) throw new NotExact('unexpected end');
    if (tok.num !== undefined) return { t: 'num', text: tok.num };
    if (tok.id !== undefined) {
      if (this.peek('(')) {
        this.i++;
        const args: Node[] = [];
        if (!this.peek(')')) {
          args.push(this.expr(depth + 1));
          while (this.peek(',')) {
            this.i++;
            args.push(this.expr(depth + 1));
          }
        }
        this.expect(')');
        return { t: 'call', name: tok.id, args };
      }
      if (tok.id === 'Infinity') return { t: 'inf' };
      return { t: 'var', name: tok.id };
    }
    if (tok.sym === '(') {
      const e = this.expr(depth + 1);
      this.expect(')');
      return e;
    }
    throw new NotExact('unexpected token');
  }
}

/** `m × 10^k` with an integer k: scientific notation, whose mantissa is exact, not a rounding. */
function isPowerOfTen(n: Node): boolean {
  if (n.t !== 'bin' || n.op !== '^' || n.a.t !== 'num' || n.a.text !== '10') return false;
  const e = n.b.t === 'neg' ? n.b.x : n.b;
  return e.t === 'num' && /^\d+$/.test(e.text);
}

interface EvalState {
  scope?: (name: string) => ExactValue | null;
}

function evaluate(n: Node, st: EvalState): ExactValue {
  switch (n.t) {
    case 'num': {
      return literal(n.text).value;
    }
    case 'inf':
      return { kind: 'infinity', sign: 1 };
    case 'var': {
      const v = st.scope?.(n.name) ?? null;
      if (v === null) throw new NotExact(`unknown name ${n.name}`);
      return v;
    }
    case 'neg':
      return neg(evaluate(n.x, st));
    case 'bin': {
      if (n.op === '*' && n.a.t === 'num' && isPowerOfTen(n.b)) {
        // 1.5 × 10^{3}: the mantissa's decimal point is notation, not rounding.
        const value = literal(n.a.text).value;
        return mul(value, evaluate(n.b, st));
      }
      const a = evaluate(n.a, st);
      const b = evaluate(n.b, st);
      if (n.op === '+') return add(a, b);
      if (n.op === '-') return add(a, neg(b));
      if (n.op === '*') return mul(a, b);
      if (n.op === '/') {
        if (isZero(b)) throw new NotExact('division by zero');
        if (a.kind === 'infinity' && b.kind === 'infinity') throw new NotExact('∞/∞');
        return mul(a, inv(b));
      }
      return pow(a, b);
    }
    case 'call': {
      const args = n.args.map((x) => evaluate(x, st));
      const one = () => {
        if (args.length !== 1) throw new NotExact(`${n.name} arity`);
        return args[0];
      };
      switch (n.name) {
        case 'factorial':
          return factorial(one());
        case 'combinations':
          if (args.length !== 2) throw new NotExact('combinations arity');
          return binomial(args[0], args[1]);
        case 'sqrt':
          return root(one(), 2);
        case 'nroot': {
          if (args.length !== 2) throw new NotExact('nroot arity');
          const k = integerOf(args[1]);
          if (k < 1n || k > 64n) throw new NotExact('root index');
          return root(args[0], Number(k));
        }
        case 'abs': {
          const x = one();
          return sign(x) < 0 ? neg(x) : x;
        }
        case 'floor':
          return floorOf(one(), false);
        case 'ceil':
          return floorOf(one(), true);
        default:
          throw new NotExact(`function ${n.name}`);
      }
    }
  }
}

/** A compiled exact evaluator: the value at a scope (variables → exact values), or null. */
export type ExactFunction = (scope?: (name: string) => ExactValue | null) => ExactResult | null;

/**
 * Compile mathjs-syntax source to an exact evaluator, or null when it does not parse in the
 * supported subset. The evaluator returns null where the value is not exact (irrational, pi, too large).
 */
export function compileExact(source: string): ExactFunction | null {
  let tree: Node;
  try {
    tree = new Parser(source).parse();
  } catch {
    return null;
  }
  // Only a side that is one decimal literal is a rounded value; inside an expression (`1.5^{100}`)
  // a decimal is the exact number it spells.
  const bare = tree.t === 'neg' ? tree.x : tree;
  const lit = bare.t === 'num' ? literal(bare.text) : null;
  const written = lit?.decimal ? { decimal: true, decimals: lit.decimals } : { decimal: false };
  return (scope) => {
    const st: EvalState = { scope };
    try {
      return { value: evaluate(tree, st), ...written };
    } catch (err) {
      if (err instanceof NotExact || err instanceof RangeError) return null;
      throw err;
    }
  };
}

/**
 * Exact value of a plain number as `parsePlainNumber` reads it (integer, decimal, `a/b`,
 * `\frac{a}{b}`, `\frac12`, mixed numbers), or null.
 */
export function plainExact(s: string): ExactResult | null {
  try {
    const mixed = /^\s*([-+]?)(\d+)\s+(\d+)\s*\/\s*(\d+)\s*$/.exec(s);
    if (mixed) {
      const v = add(rational(BigInt(mixed[2])), rational(BigInt(mixed[3]), BigInt(mixed[4])));
      return { value: mixed[1] === '-' ? neg(v) : v, decimal: false };
    }
    const t = s.replace(/\s+/g, '');
    let m = /^([-+]?)(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)$/.exec(t);
    if (m) {
      const lit = literal(m[2]);
      return {
        value: m[1] === '-' ? neg(lit.value) : lit.value,
        decimal: lit.decimal,
        ...(lit.decimal ? { decimals: lit.decimals } : {}),
      };
    }
    const ratio = (sg: string, a: string, b: string, whole?: string): ExactResult => {
      const la = literal(a.replace(/^-/, ''));
      const lb = literal(b.replace(/^-/, ''));
      if (isZero(lb.value)) throw new NotExact('division by zero');
      let v = mul(la.value, inv(lb.value));
      if ((a.startsWith('-') ? 1 : 0) + (b.startsWith('-') ? 1 : 0) === 1) v = neg(v);
      if (whole !== undefined) v = add(rational(BigInt(whole)), v);
      // A ratio is an exact value even when its parts have decimal points.
      return { value: sg === '-' ? neg(v) : v, decimal: false };
    };
    m = /^([-+]?)(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(t);
    if (m) return ratio(m[1], m[2], m[3]);
    m = /^([-+]?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}$/.exec(t);
    if (m) return ratio(m[1], m[2], m[3]);
    m = /^([-+]?)\\frac(\d)(\d)$/.exec(t);
    if (m) return ratio(m[1], m[2], m[3]);
    m = /^([-+]?)(\d+)\\frac\{(\d+)\}\{(\d+)\}$/.exec(t);
    if (m) return ratio(m[1], m[3], m[4], m[2]);
  } catch {
    return null;
  }
  return null;
}

/** The exact rational for a finite double (every double is a dyadic rational). */
export function rationalOfNumber(x: number): ExactValue | null {
  if (!Number.isFinite(x)) return null;
  if (Number.isInteger(x)) return rational(BigInt(x));
  // Decimal expansion of a sample value such as 1.3 + k/50000 is short: read it from its shortest form.
  const lit = /^(-?)(\d+)(?:\.(\d+))?(?:e([-+]\d+))?$/.exec(String(x));
  if (!lit) return null;
  const v = literal(`${lit[2]}${lit[3] ? `.${lit[3]}` : ''}${lit[4] ? `e${lit[4]}` : ''}`).value;
  return lit[1] === '-' ? neg(v) : v;
}

/** Multiply an exact value by a rational (the percent policy scales by 1/100). */
export function scaleExact(x: ExactValue, n: bigint, d: bigint): ExactValue {
  return mul(x, rational(n, d));
}

/**
 * Whether two exact values are equal: exactly, or, when a side is a decimal by nature (one written
 * decimal literal, a rounded value), at its written precision — the other value rounds to it:
 * |x − y| ≤ ½·10^−d for d digits after the point (the fewer digits when both are decimals), in
 * rationals. `7` ≠ `7.0000001`, `0.333` = `1/3`. Infinities equal only infinities of the same sign.
 */
export function exactEqual(a: ExactResult, b: ExactResult): boolean {
  const x = a.value;
  const y = b.value;
  if (x.kind === 'infinity' || y.kind === 'infinity')
    return x.kind === 'infinity' && y.kind === 'infinity' && x.sign === y.sign;
  if (x.n === y.n && x.d === y.d) return true;
  const d = writtenDecimals(a, b);
  if (d === null) return false;
  const diff = add(x, neg(y));
  return compare(sign(diff) < 0 ? neg(diff) : diff, halfUnit(d)) <= 0;
}

/** Digits after the point of the coarser decimal-by-nature side, or null when neither is one. */
function writtenDecimals(a: ExactResult, b: ExactResult): number | null {
  const da = a.decimal ? (a.decimals ?? 0) : null;
  const db = b.decimal ? (b.decimals ?? 0) : null;
  if (da === null) return db;
  if (db === null) return da;
  return Math.min(da, db);
}

/** ½·10^−d as an exact rational. */
function halfUnit(d: number): ExactValue {
  return rational(1n, 2n * 10n ** BigInt(d));
}

/** Order of two rationals. */
function compare(a: ExactValue, b: ExactValue): number {
  if (a.kind !== 'rational' || b.kind !== 'rational') throw new NotExact('compare');
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l === r ? 0 : l < r ? -1 : 1;
}

/** The nearest double of an exact value (±Infinity beyond the double range). */
export function toNumber(x: ExactValue): number {
  if (x.kind === 'infinity') return x.sign * Number.POSITIVE_INFINITY;
  const shift = Math.max(0, bits(x.d) - bits(x.n) + 64);
  const q = (x.n << BigInt(shift)) / x.d;
  return Number(q) / 2 ** shift;
}

/** The parts of decimal.js used by {@link compileDecimal} (a Decimal constructor at some precision). */
// biome-ignore lint/suspicious/noExplicitAny: decimal.js constructor and values.
export type DecimalCtor = any;

/**
 * Compile a constant mathjs-syntax source to an evaluator over decimal.js at a given precision
 * (π, e, roots, logarithms, trigonometry), or null when it does not parse. The evaluator returns
 * null for a non-finite or non-real value, and throws NotExact for notation it does not know.
 */
export function compileDecimal(source: string): ((D: DecimalCtor) => DecimalCtor | null) | null {
  let tree: Node;
  try {
    tree = new Parser(source).parse();
  } catch {
    return null;
  }
  return (D) => {
    const v = evaluateDecimal(tree, D);
    return v.isFinite() ? v : null;
  };
}

/** Whether a failure of {@link compileDecimal}'s evaluator is "notation not covered". */
export function isUnsupported(err: unknown): boolean {
  return err instanceof NotExact;
}

function evaluateDecimal(n: Node, D: DecimalCtor): DecimalCtor {
  const integer = (x: DecimalCtor, max: number) => {
    if (!x.isInteger() || x.isNegative() || x.gt(max)) throw new NotExact('range');
    return x.toNumber() as number;
  };
  switch (n.t) {
    case 'num':
      return new D(n.text);
    case 'inf':
      return new D(Number.NaN);
    case 'var':
      if (n.name === 'pi') return D.acos(-1);
      if (n.name === 'e') return D.exp(1);
      throw new NotExact(`name ${n.name}`);
    case 'neg':
      return evaluateDecimal(n.x, D).neg();
    case 'bin': {
      const a = evaluateDecimal(n.a, D);
      const b = evaluateDecimal(n.b, D);
      if (n.op === '+') return a.plus(b);
      if (n.op === '-') return a.minus(b);
      if (n.op === '*') return a.times(b);
      if (n.op === '/') return b.isZero() ? new D(Number.NaN) : a.div(b);
      if (b.abs().gt(1e6)) throw new NotExact('exponent');
      return a.pow(b);
    }
    case 'call': {
      const args = n.args.map((x) => evaluateDecimal(x, D));
      const x = args[0];
      if (args.length === 2) {
        if (n.name === 'log') return D.ln(x).div(D.ln(args[1]));
        if (n.name === 'nroot') {
          const k = integer(args[1], 64);
          if (x.isNegative() && k % 2 === 1) return x.neg().pow(new D(1).div(k)).neg();
          return x.pow(new D(1).div(k));
        }
        if (n.name === 'combinations') {
          const k = integer(args[1], MAX_FACTORIAL);
          const m = integer(x, 1e15);
          let r = new D(1);
          for (let j = 1; j <= k; j++) r = r.times(m - k + j).div(j);
          return r.round();
        }
        throw new NotExact(`function ${n.name}`);
      }
      if (args.length !== 1) throw new NotExact(`function ${n.name}`);
      switch (n.name) {
        case 'sqrt':
          return x.isNegative() ? new D(Number.NaN) : x.sqrt();
        case 'abs':
          return x.abs();
        case 'exp':
          return x.exp();
        case 'log':
        case 'ln':
          return x.ln();
        case 'log10':
          return x.log(10);
        case 'log2':
          return x.log(2);
        case 'sin':
          return x.sin();
        case 'cos':
          return x.cos();
        case 'tan':
          return x.tan();
        case 'sec':
          return new D(1).div(x.cos());
        case 'csc':
          return new D(1).div(x.sin());
        case 'cot':
          return new D(1).div(x.tan());
        case 'asin':
          return x.asin();
        case 'acos':
          return x.acos();
        case 'atan':
          return x.atan();
        case 'sinh':
          return x.sinh();
        case 'cosh':
          return x.cosh();
        case 'tanh':
          return x.tanh();
        case 'floor':
          return x.floor();
        case 'ceil':
          return x.ceil();
        case 'factorial': {
          const k = integer(x, MAX_FACTORIAL);
          let r = new D(1);
          for (let j = 2; j <= k; j++) r = r.times(j);
          return r;
        }
        default:
          throw new NotExact(`function ${n.name}`);
      }
    }
  }
}
