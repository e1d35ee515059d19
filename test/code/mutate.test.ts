import { describe, expect, it } from 'vitest';
import { splitCodeBlocks } from '../../src/code/blocks.js';
import { firstMutatedStep, mutantRow } from '../../src/code/label.js';
import { generateMutants } from '../../src/code/mutate.js';
import type { Problem } from '../../src/core/types.js';

const reference = [
  'def count_big(xs, k):',
  '    # count items above k',
  '    n = 0',
  '    for x in xs:',
  '        if x > k and x != 99:',
  '            n += 1',
  '    return max(n, 0)',
].join('\n');

describe('syntax-tree mutants', () => {
  it('covers every kind, changes one node, and leaves the other lines as written', async () => {
    const result = await generateMutants([
      { id: 'a', code: reference },
      { id: 'bad', code: 'def f(:\n' },
    ]);
    const mutants = result.get('a')?.mutants ?? [];
    expect(result.get('bad')?.error).toMatch(/SyntaxError/);
    const kinds = new Set(mutants.map((m) => m.kind));
    for (const k of [
      'comparison',
      'constant',
      'boolean',
      'arithmetic',
      'drop',
      'call',
      'off-by-one',
    ] as const) {
      if (k !== 'off-by-one') expect(kinds.has(k), k).toBe(true);
    }
    const refLines = reference.split('\n');
    for (const m of mutants) {
      expect(m.code).not.toBe(reference);
      const lines = m.code.split('\n');
      if (m.dropped) {
        expect(m.code.trimEnd().split('\n').length).toBeLessThan(refLines.length);
      } else {
        // Exactly the line of the change differs.
        expect(lines.length).toBe(refLines.length);
        const differing = lines.map((l, i) => (l === refLines[i] ? -1 : i + 1)).filter((i) => i > 0);
        expect(differing).toEqual([m.line]);
        expect(lines[0]).toBe(refLines[0]);
        expect(lines[1]).toBe('    # count items above k');
      }
    }
    const cmp = mutants.find((m) => m.description === '> -> >=');
    expect(cmp?.code).toContain('if (x >= k) and x != 99:');
    expect(mutants.find((m) => m.description === 'max() -> min()')?.line).toBe(7);
    expect(mutants.find((m) => m.kind === 'drop' && m.line === 3)?.code).not.toContain('n = 0');
  });

  it('labels the first mutated step negative and the steps before it positive', async () => {
    const mutants = (await generateMutants([{ id: 'a', code: reference }])).get('a')?.mutants ?? [];
    const problem: Problem = {
      id: 'toy',
      question: 'Count items above k.',
      answer: '',
      domain: 'code',
      source: 'mbpp',
    };
    const inIf = mutants.find((m) => m.description === '> -> >=')!;
    const row = mutantRow(problem, inIf, 'failed')!;
    expect(row.completions).toEqual([
      'def count_big(xs, k):',
      '    # count items above k\n    n = 0',
      '    for x in xs:\n        if (x >= k) and x != 99:\n            n += 1',
    ]);
    expect(row.labels).toEqual([true, true, false]);
    expect(row.firstError.mutation).toBe(2);
    expect(row.chunks.map((c) => c.labels.mutation)).toEqual(row.labels);
    // A dropped statement: the step that now stands where it was is the first wrong one.
    const dropInit = mutants.find((m) => m.kind === 'drop' && m.line === 3)!;
    const dropped = mutantRow(problem, dropInit, 'error')!;
    expect(dropped.labels).toEqual([true, false]);
    expect(dropped.completions[1]).toContain('for x in xs:');
    // Dropping the last statement leaves no step to blame: no row.
    const steps = splitCodeBlocks('def f():\n    a = 1\n');
    expect(firstMutatedStep('def f():\n    a = 1\n', steps, { line: 3, dropped: true })).toBe(-1);
  });
});
