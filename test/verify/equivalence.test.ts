import { describe, expect, it } from 'vitest';
import { explainEquivalence, isEquivalent, normalizeAnswer } from '../../src/verify/index.js';

const eq = (g: string, p: string) => expect(isEquivalent(g, p), `${g} vs ${p}`).toBe(true);
const ne = (g: string, p: string) => expect(isEquivalent(g, p), `${g} vs ${p}`).toBe(false);

describe('normalisation', () => {
  it('removes spacing, delimiters, \\left/\\right, \\text, units, currency, degrees', () => {
    expect(normalizeAnswer('$\\left( \\dfrac{1}{2} \\right)$').text).toBe('( \\frac{1}{2} )');
    expect(normalizeAnswer('\\$1{,}000.50').text).toBe('1000.50');
    expect(normalizeAnswer('90^\\circ').text).toBe('90');
    expect(normalizeAnswer('64 square feet').text).toBe('64');
    expect(normalizeAnswer('15\\mbox{ cm}^2').text).toBe('15');
    expect(normalizeAnswer('28\\%')).toEqual({ text: '28', percent: true });
    expect(normalizeAnswer('\\text{odd}').text).toBe('odd');
  });

  it('keeps a variable after a number and commands before words', () => {
    expect(normalizeAnswer('5 x').text).toBe('5 x');
    expect(normalizeAnswer('5 \\geq x').text).toBe('5 \\geq x');
  });

  it('restores backslashes lost to string escapes', () => {
    expect(normalizeAnswer('x \neq 3').text).toBe('x \\neq 3');
  });
});

describe('isEquivalent: numbers', () => {
  it('integers, decimals, fractions, thousands separators, scientific notation, mixed numbers', () => {
    eq('\\frac{1}{2}', '0.5');
    eq('0.4', '.4');
    eq('1000', '1,000');
    eq('1000', '1 000');
    eq('12000023', '12,\\!000,\\!023');
    eq('14916', '14{,}916');
    eq('033', '33');
    eq('-0', '0');
    eq('1.5\\times 10^{3}', '1500');
    eq('2.5e3', '2500');
    eq('918\\frac{1}{2}', '918.5');
    eq('2/(-3)', '-2/3');
    ne('3', '4');
    ne('5', '5.001');
    // "32, 349" with a plain comma and space is a list, not thirty-two thousand.
    ne('32349', '32, 349');
  });

  it('percent: flexible by default, strict on request', () => {
    eq('10\\%', '10');
    eq('25\\%', '0.25');
    eq('28\\%', '28 percent');
    expect(isEquivalent('25\\%', '25', { percent: 'strict' })).toBe(false);
    expect(isEquivalent('25\\%', '0.25', { percent: 'strict' })).toBe(true);
  });

  it('float tolerance option', () => {
    // Written precision: 3.14159 rounds to 3.1416; against an irrational the tolerance applies too.
    eq('3.14159', '3.1416');
    ne('3.1415', '3.1417');
    ne('\\sqrt{2}', '1.41421');
    expect(isEquivalent('\\sqrt{2}', '1.41421', { floatTolerance: 1e-4 })).toBe(true);
  });

  it('units, currency and degrees', () => {
    eq('10\\text{ units}', '10');
    ne('10\\text{ units}', '100');
    eq('\\$10', '10');
    eq('72 degrees', '72');
    eq('48^\\circ', '48');
  });
});

describe('isEquivalent: symbolic', () => {
  it('expressions by numeric substitution', () => {
    eq('x^2+2x+1', '(x+1)^2');
    eq('\\tan^2(y)+1', '\\sec^2(y)');
    eq('\\frac{x+2}{7}', '\\frac{x}{7}+\\frac{2}{7}');
    eq('\\sqrt{17}', '4.123105625617661');
    eq('10\\sqrt3 + \\sqrt{4}', '10\\sqrt{3}+2');
    eq('\\frac{1}{3\\sqrt[3]{x}^2}', '\\frac{1}{3x^{2/3}}');
    eq('\\sqrt[3]{-8}', '-2');
    ne('x^2+2x+1', 'y^2+2y+1');
    ne('x+2n+1', 'x+1');
    ne('f(x)', 'f(y)');
  });

  it('sums and integrals by compute-engine canonical forms', () => {
    eq('\\sum_{k=0}^{n-1} F_k F_{n-k-1}', '\\sum_{k=0}^{n-1} F_{n-k-1} F_k');
    ne('\\sum_{k=0}^{n-1} F_k F_{n-k-1}', '\\sum_{k=0}^{n-2} F_k F_{n-k-2}');
    ne('\\int_0^1 x^2 dx', '\\int_0^2 x^2 dx');
    expect(explainEquivalence('\\sum_{k=1}^{n} k', '\\sum_{k=1}^{n} k + 0').method).toBe('symbolic');
  });

  it('complex numbers (real-valued fast path falls back to the complex engine)', () => {
    eq('\\sqrt{-4}', '2i');
    eq('e^{i\\pi}', '-1');
    ne('\\sqrt{-4}', '2');
    eq('\\frac34i', '\\frac{3}{4}i');
    eq('(1+i)^2', '2i');
    ne('1+i', '1-i');
  });

  it('matrices, including arithmetic on them', () => {
    eq(
      '\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}',
      '\\left[\\begin{array}{cc}1 & 2 \\\\ 3 & 4\\end{array}\\right]',
    );
    eq(
      '\\begin{pmatrix}6&8\\\\10&12\\end{pmatrix}',
      '\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}+\\begin{pmatrix}5&6\\\\7&8\\end{pmatrix}',
    );
    ne('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', '\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}');
    ne('\\begin{pmatrix}1&2\\end{pmatrix}', '\\begin{pmatrix}1\\\\2\\end{pmatrix}');
  });
});

describe('isEquivalent: structure', () => {
  it('tuples are ordered, bare lists and sets are not', () => {
    eq('(1,\\frac{9}{2})', '(1,4.5)');
    ne('(1,2)', '(2,1)');
    eq('1, 2, 3', '3, 1, 2');
    eq('\\{1, 2\\}', '2, 1');
    eq('\\pm 2021', '\\{-2021, 2021\\}');
    ne('\\pm 2021', '2021');
    expect(isEquivalent('1, 2, 3', '3, 1, 2', { listOrder: 'ordered' })).toBe(false);
  });

  it('intervals: bracket types matter', () => {
    eq('[0,1)', '[0, 1)');
    ne('(0,9)', '[0,9)');
    eq('(-\\infty, 3] \\cup (5, \\infty)', '(5,\\infty)\\cup(-\\infty,3]');
    eq('x \\in [-2,7]', '[-2, 7]');
    eq('-793 < a < 10', '(-793, 10)');
    eq('x \\geq 5', '[5, \\infty)');
    eq('1\\leq|z|\\leq 2', '[-2,-1]\\cup[1,2]');
  });

  it('equations: names on the left, moved terms, scaled equations', () => {
    eq('x = 5', '5');
    eq('5', 'k=5');
    eq('(p,q)=(3,2)', '(3,2)');
    ne('7 = 11a+c', '11a+c');
    ne('a + 3z = 0', '0');
    eq('2x+4y-3=0', 'y=-\\frac{1}{2}x+\\frac{3}{4}');
    eq('x^2/4 + y^2/3 = 1', 'x^2/16 + y^2/12 = 1/4');
    ne('5x - 7y + 11z + 4 = 0', 'x + y - z + 2 = 0');
    eq('x = 11', 'x = 5+5+1 = 7 = 11');
    eq('\\frac{\\sqrt{3}}{3}', '\\frac{\\sqrt{3}}{3} \\approx 0.577');
  });

  it('inequalities up to moving terms and flipping', () => {
    eq('x \\leq 5', '5 \\geq x');
    eq('x < 1', '-x > -1');
    ne('x < 1', 'x > -1');
    ne('x < 5', 'x \\le 5');
  });

  it('several answers with names', () => {
    eq('p=5,q=2;p=7,q=2', '(5,2),(7,2)');
    eq('a_3 = 2, a_{37} = 19', 'a_{37} = 19, a_3 = 2');
    eq('19, 46, and 82', '19, 46, \\text{ and } 82');
    ne('19, 46, and 82', '21, 36, and 82');
  });

  it('text answers and multiple-choice letters', () => {
    eq('\\text{odd}', 'odd');
    ne('odd', '\\text{oddd}');
    eq('C', 'C. x = 42');
    eq('\\text{(C)}', 'C');
    ne('A', 'B');
    ne('d', '\\text{E}');
  });
});

describe('explainEquivalence', () => {
  it('reports method and normalised forms', () => {
    const r = explainEquivalence('\\dfrac{1}{2}', '$0.5$');
    expect(r).toMatchObject({ equal: true, method: 'number', gold: '\\frac{1}{2}', pred: '0.5' });
    expect(explainEquivalence('x^2', 'x\\cdot x').method).toBe('symbolic');
    expect(explainEquivalence('x', 'x').method).toBe('string');
  });

  it('says why when there is no prediction or the cap is hit', () => {
    expect(explainEquivalence('1', null)).toMatchObject({
      equal: false,
      method: 'none',
      reason: 'no predicted answer',
    });
    const r = explainEquivalence('x^2+1', 'x^2+2', { timeoutMs: -1 });
    expect(r.equal).toBe(false);
    expect(r.method).toBe('timeout');
    expect(r.reason).toMatch(/cap/);
  });
});

describe('isEquivalent: approximations and mixed numbers', () => {
  it('an approximation follows the exact value it rounds', () => {
    expect(isEquivalent('x = 1/3', 'x = 5+5+1 = 1/3 \\approx 11')).toBe(true);
    expect(isEquivalent('1/3', 'x=1/3\\approx1.3')).toBe(true);
    expect(isEquivalent('11', 'x \\approx 11')).toBe(true);
  });

  it('mixed numbers with a space or a fraction', () => {
    expect(isEquivalent('\\frac{31}{4}', '7 3/4')).toBe(true);
    expect(isEquivalent('7.75', '7\\frac{3}{4}')).toBe(true);
    expect(isEquivalent('\\frac{21}{4}', '7 3/4')).toBe(false);
  });

  it('doubled backslashes from escaping are repaired', () => {
    expect(isEquivalent('\\\\frac{1}{2}', '0.5')).toBe(true);
  });
});
