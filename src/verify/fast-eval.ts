/**
 * Real-valued evaluation of translated expressions in plain JavaScript: the fast path that keeps
 * mathjs (about 1 s to load, ~0.5 ms to compile) out of most comparisons. Only expressions without
 * matrices or the imaginary unit qualify; a NaN (e.g. the square root of a negative number) makes
 * the caller redo both sides in mathjs, which knows complex numbers.
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0 (Lanczos approximation). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

function gamma(x: number): number {
  if (Number.isInteger(x)) {
    if (x <= 0) return Number.NaN;
    if (x > 171) return Number.POSITIVE_INFINITY;
    let r = 1;
    for (let k = 2; k < x; k++) r *= k;
    return r;
  }
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x));
  if (x > 171.6) return Number.POSITIVE_INFINITY;
  return Math.exp(logGamma(x));
}

/** Functions the translated source may call, with mathjs's meaning. */
const RUNTIME = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  sec: (x: number) => 1 / Math.cos(x),
  csc: (x: number) => 1 / Math.sin(x),
  cot: (x: number) => 1 / Math.tan(x),
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  log: (x: number, base?: number) => (base === undefined ? Math.log(x) : Math.log(x) / Math.log(base)),
  log10: Math.log10,
  exp: Math.exp,
  sqrt: Math.sqrt,
  abs: Math.abs,
  floor: Math.floor,
  ceil: Math.ceil,
  nroot: (x: number, n: number) => {
    if (x < 0 && Number.isInteger(n) && n % 2 !== 0) return -((-x) ** (1 / n));
    return x ** (1 / n);
  },
  factorial: (n: number) => (n < 0 ? Number.NaN : n > 170 ? Number.POSITIVE_INFINITY : gamma(n + 1)),
  combinations: (n: number, k: number) => {
    if (Number.isInteger(n) && Number.isInteger(k) && k >= 0 && n >= k && k <= 200) {
      let r = 1;
      for (let j = 1; j <= k; j++) r = (r * (n - k + j)) / j;
      return Math.round(r);
    }
    return Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1));
  },
};

type Runtime = typeof RUNTIME;

/** A compiled real-valued function of the scope (variable name -> value). */
export type FastFunction = (scope: Record<string, number>) => number;

const TOKEN = /(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Compile mathjs-syntax source (as emitted by `latexToMathjs`) to a JavaScript function, or null
 * when it needs mathjs (matrices, complex numbers, unknown names). The generated code is built only
 * from whitelisted pieces and checked against a character whitelist before compilation.
 */
export function compileFast(source: string): FastFunction | null {
  if (/[[\]]/.test(source)) return null;
  let ok = true;
  const js = source
    .replace(TOKEN, (whole, num: string | undefined, id: string | undefined) => {
      if (num !== undefined) return num;
      if (id === undefined) return whole;
      if (id.startsWith('v_')) return `s.${id}`;
      if (id === 'pi') return 'Math.PI';
      if (id === 'e') return 'Math.E';
      if (id === 'Infinity') return 'Infinity';
      if (Object.hasOwn(RUNTIME, id)) return `R.${id}`;
      ok = false;
      return whole;
    })
    .replace(/\^/g, '**');
  if (!ok || !/^[\w\s+\-*/().,]*$/.test(js)) return null;
  try {
    const fn = new Function('R', 's', `"use strict"; return (${js});`) as (
      r: Runtime,
      s: Record<string, number>,
    ) => unknown;
    return (scope) => {
      const v = fn(RUNTIME, scope);
      return typeof v === 'number' ? v : Number.NaN;
    };
  } catch {
    return null;
  }
}
