import { beforeAll, describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../../src/core/rng.js';
import { explainEquivalence, extractAnswer, isEquivalent, warmUpVerifier } from '../../src/verify/index.js';

/** Pieces of LaTeX, prose and junk that random answers are glued from. */
const PIECES = [
  '\\frac{',
  '\\frac',
  '\\dfrac',
  '{',
  '}',
  '\\{',
  '\\}',
  '(',
  ')',
  '[',
  ']',
  '\\left(',
  '\\right)',
  '\\left[',
  '\\boxed{',
  '\\fbox{',
  '$',
  '$$',
  '\\(',
  '\\)',
  '\\[',
  '\\]',
  '^',
  '_',
  '^{',
  '_{',
  '\\sqrt',
  '\\sqrt[',
  '\\pm',
  '\\mp',
  ',',
  ';',
  '=',
  '<',
  '>',
  '\\le',
  '\\geq',
  '\\neq',
  '\\approx',
  '\\in',
  '\\cup',
  '&',
  '\\\\',
  '\\begin{pmatrix}',
  '\\end{pmatrix}',
  '\\begin{array}{cc}',
  '\\end{array}',
  '\\text{',
  '\\mathrm{',
  '%',
  '\\%',
  '\\$',
  '\\,',
  '\\!',
  '{,}',
  '\\quad',
  ' and ',
  ' or ',
  'The answer is ',
  'Final Answer: The final answer is ',
  '#### ',
  'A: ',
  '<<',
  '>>',
  '\\sin',
  '\\log_',
  '\\ln',
  '\\pi',
  '\\infty',
  'e',
  'i',
  'x',
  'y',
  'n',
  'k',
  'f(x)',
  '|',
  '!',
  "'",
  '0',
  '1',
  '2',
  '3',
  '7',
  '9',
  '10',
  '1000',
  '0.5',
  '.25',
  '-',
  '+',
  '*',
  '/',
  '\\cdot',
  '\\times',
  '\\binom{',
  '\\lfloor',
  '\\rfloor',
  '\\unknowncmd',
  '\\',
  '\n',
  '\t',
  ' ',
  'm²',
  '°',
  '^\\circ',
  'π',
  '∞',
  '√',
  '\\sum_{k=1}^{n}',
  '\\int_0^1',
  '\\overline{3}',
  '\\mathbb{R}',
  '\\emptyset',
  'degrees',
  'percent',
  'cm',
  '😀',
];

function randomAnswer(rng: Rng): string {
  const n = rng.int(0, 40);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.pick(PIECES);
  return s;
}

function adversarial(rng: Rng, k: number): string {
  switch (k % 10) {
    case 0:
      return '{'.repeat(rng.int(1000, 20000));
    case 1:
      return `${'\\frac{1}{'.repeat(rng.int(200, 3000))}2`;
    case 2:
      return '('.repeat(5000) + 'x' + ')'.repeat(rng.int(0, 5000));
    case 3:
      return `\\boxed{${'x+'.repeat(50_000)}1}`; // ~100 KB
    case 4:
      return 'The answer is '.repeat(8000); // ~110 KB of prose
    case 5:
      return '$'.repeat(rng.int(1000, 100_000));
    case 6:
      return '\\boxed{'.repeat(rng.int(1000, 15_000));
    case 7:
      return `${'2^{'.repeat(rng.int(10, 200))}9${'}'.repeat(rng.int(0, 200))}`;
    case 8:
      return `\\binom{10^{9}}{5\\cdot 10^{8}} + ${'9^'.repeat(50)}9 + (10^{8})!`;
    default:
      return Array.from({ length: 2000 }, () => rng.pick(PIECES)).join('');
  }
}

describe('fuzz: random and malformed inputs', () => {
  // The one-off engine load (1-3 s per process) is not a comparison; load it before timing.
  beforeAll(() => warmUpVerifier());

  it('10,000 inputs: every call returns within 1 s and none throws', () => {
    const rng = createRng('verify-fuzz');
    const inputs: string[] = [];
    for (let k = 0; k < 200; k++) inputs.push(adversarial(rng, k));
    while (inputs.length < 10_000) inputs.push(randomAnswer(rng));
    let slowest = 0;
    let slowestInput = '';
    const timed = (input: string, fn: () => unknown) => {
      const t = performance.now();
      fn();
      const dt = performance.now() - t;
      if (dt > slowest) {
        slowest = dt;
        slowestInput = input.slice(0, 120);
      }
    };
    for (let i = 0; i < inputs.length; i++) {
      const s = inputs[i];
      const other = inputs[(i * 7919) % inputs.length];
      timed(s, () => {
        const a = extractAnswer(s);
        expect(a === null || typeof a === 'string').toBe(true);
      });
      timed(s, () => expect(typeof isEquivalent(s, other)).toBe('boolean'));
      if (i % 3 === 0) timed(s, () => expect(typeof explainEquivalence(other, s).equal).toBe('boolean'));
      if (i % 5 === 0) timed(s, () => expect(isEquivalent(s, s)).toBe(true));
    }
    expect(slowest, `slowest call ${slowest.toFixed(0)} ms on ${JSON.stringify(slowestInput)}`).toBeLessThan(
      1000,
    );
  });
});
