import { describe, expect, it } from 'vitest';
import { compileFast } from '../../src/verify/fast-eval.js';
import { latexToMathjs } from '../../src/verify/latex.js';

const run = (latex: string, scope: Record<string, number> = {}) => {
  const fn = compileFast(latexToMathjs(latex).source);
  if (!fn) throw new Error(`no fast path for ${latex}`);
  return fn(scope);
};

describe('plain-JavaScript evaluation of translated LaTeX', () => {
  it('evaluates the usual notation', () => {
    expect(run('\\frac{1}{2} + \\sqrt{16}')).toBeCloseTo(4.5, 12);
    expect(run('2^{10}')).toBe(1024);
    expect(run('-x^2', { v_x: 3 })).toBe(-9);
    expect(run('\\sqrt[3]{-8}')).toBeCloseTo(-2, 12);
    expect(run('5!')).toBe(120);
    expect(run('\\binom{10}{3}')).toBe(120);
    expect(run('\\log_2 8')).toBeCloseTo(3, 12);
    expect(run('\\sec^2 x - \\tan^2 x', { v_x: 0.7 })).toBeCloseTo(1, 12);
    expect(run('|3-5|')).toBe(2);
  });

  it('gamma-based factorial and binomial stay cheap for huge arguments', () => {
    expect(run('0.5!')).toBeCloseTo(Math.sqrt(Math.PI) / 2, 10);
    expect(run('(10^{8})!')).toBe(Number.POSITIVE_INFINITY);
    const t = performance.now();
    expect(run('\\binom{10^{9}}{5\\cdot 10^{8}}')).toBe(Number.POSITIVE_INFINITY);
    expect(performance.now() - t).toBeLessThan(50);
  });

  it('leaves complex numbers and matrices to mathjs', () => {
    expect(compileFast(latexToMathjs('3+2i').source)).toBeNull();
    expect(compileFast(latexToMathjs('\\begin{pmatrix}1&2\\end{pmatrix}').source)).toBeNull();
    expect(compileFast('constructor(1)')).toBeNull();
    expect(compileFast('process.exit(1)')).toBeNull();
  });
});
