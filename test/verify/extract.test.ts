import { describe, expect, it } from 'vitest';
import { checkMathAnswer, extractAnswer, findBoxed } from '../../src/verify/index.js';

describe('extractAnswer', () => {
  it('takes the last \\boxed with nested braces', () => {
    expect(extractAnswer('First $\\boxed{1}$, then $\\boxed{\\frac{1}{\\sqrt{2}}}$.')).toBe(
      '\\frac{1}{\\sqrt{2}}',
    );
    expect(extractAnswer('so \\fbox{42}')).toBe('42');
    expect(extractAnswer('hence \\boxed 7 is it')).toBe('7');
  });

  it('skips an unbalanced box instead of failing', () => {
    expect(findBoxed('\\boxed{1} and \\boxed{2')).toEqual(['1']);
    expect(extractAnswer('\\boxed{unclosed')).toBeNull();
  });

  it('joins boxes separated only by "and", commas or remarks', () => {
    expect(extractAnswer('roots \\[ \\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}. \\]')).toBe('-2, 1');
    expect(extractAnswer('$\\boxed{1}\\boxed{2}$')).toBe('1, 2');
    // Text between the boxes: the last box alone.
    expect(extractAnswer('Some text \\boxed{2x + 3} and more text \\boxed{4y - 5}')).toBe('4y - 5');
    // The same answer written twice with "=": the last form.
    expect(extractAnswer('$d = \\boxed{15\\frac{39}{40}} = \\boxed{\\frac{639}{40}}$')).toBe(
      '\\frac{639}{40}',
    );
  });

  it('reads GSM8K "#### n" and "A: n" lines, ignoring calculator annotations', () => {
    expect(extractAnswer('48/2 = <<48/2=24>>24\n#### 72')).toBe('72');
    expect(extractAnswer('He pays 2*3=<<2*3=6>>6 dollars. A: 3,000')).toBe('3,000');
  });

  it('reads answer phrases', () => {
    expect(extractAnswer('Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.')).toBe(
      '\\frac{1}{2}',
    );
    expect(extractAnswer('Final Answer: The final answer is 12,000,023. I hope it is correct.')).toBe(
      '12,000,023',
    );
    expect(extractAnswer('Final Answer: The largest $n$ is 34.')).toBe('34');
    expect(extractAnswer('So the answer is 0')).toBe('0');
    expect(extractAnswer('Answer: 2x + 3')).toBe('2x + 3');
    expect(extractAnswer('Some work.\n\n**Answer:** 5')).toBe('5');
    expect(extractAnswer('**Final Answer**: $\\frac{3}{4}$')).toBe('\\frac{3}{4}');
    expect(extractAnswer('Thus the answer is (B).')).toBe('(B)');
  });

  it('prefers a final-answer statement that comes after the last box', () => {
    expect(
      extractAnswer('= \\boxed{255}$ so he has $10,455. Final Answer: The final answer is $10,455$. I hope'),
    ).toBe('10,455');
  });

  it('falls back to the last math span, then the last number', () => {
    expect(extractAnswer('Answer \\( (9+1) \\)')).toBe('(9+1)');
    expect(extractAnswer('Answer $ \\frac{1}{2} \\$ = \\frac{10}{9} $')).toBe('\\frac{10}{9}');
    expect(extractAnswer('the number is not 10 which is 1,000.99€')).toBe('1,000.99');
    expect(extractAnswer('The identity matrix is $ \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} $.')).toBe(
      '\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}',
    );
  });

  it('returns null when there is no answer', () => {
    expect(extractAnswer('Some text without boxed answer')).toBeNull();
    expect(extractAnswer('')).toBeNull();
  });
});

describe('checkMathAnswer', () => {
  it('extracts and compares', () => {
    expect(checkMathAnswer('\\frac{1}{2}', 'So $x = \\boxed{0.5}$.')).toEqual({
      answer: '0.5',
      correct: true,
    });
    expect(checkMathAnswer('18', '#### 17')).toEqual({ answer: '17', correct: false });
    expect(checkMathAnswer('18', 'no idea')).toEqual({ answer: null, correct: false });
  });
});
