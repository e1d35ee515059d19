import { describe, expect, it } from 'vitest';
import { chunkLines, segmentCode, splitCodeBlocks } from '../../src/code/blocks.js';
import { firstNewBlock } from '../../src/code/domain.js';
import { codeSteps } from '../../src/code/label.js';
import { chunkGaps, rebuildText } from '../../src/core/segment.js';
import { loadHumanEval, loadMbpp } from '../../src/data/index.js';
import { sharedData } from '../support/shared-data.js';

const code = [
  'import math',
  '',
  '@cache',
  'def f(xs,',
  '      k):',
  '    """Doc',
  '    string."""',
  '    total = 0',
  '    # walk the list',
  '    for x in xs:',
  '        if x > k:',
  '            total += x',
  '        else:',
  '            total -= 1',
  '    try:',
  '        y = 1 / k',
  '    except ZeroDivisionError:',
  '        y = 0',
  '    s = """a',
  'b"""',
  '    return total + \\',
  '        y',
  '',
  'if __name__ == "__main__":',
  '    print(f([1], 2))',
  '',
].join('\n');

describe('code steps', () => {
  it('splits into logical blocks: header with docstring, one block per body statement, nested blocks together', () => {
    expect(splitCodeBlocks(code).map((c) => c.text)).toEqual([
      'import math',
      '@cache\ndef f(xs,\n      k):\n    """Doc\n    string."""',
      '    total = 0',
      '    # walk the list\n    for x in xs:\n        if x > k:\n            total += x\n        else:\n            total -= 1',
      '    try:\n        y = 1 / k\n    except ZeroDivisionError:\n        y = 0',
      '    s = """a\nb"""',
      '    return total + \\\n        y',
      'if __name__ == "__main__":\n    print(f([1], 2))',
    ]);
  });

  it('rebuilds the code exactly from chunks and gaps; lines mode keeps indentation', () => {
    const chunks = splitCodeBlocks(code);
    expect(rebuildText(chunks, chunkGaps(code, chunks))).toBe(code);
    for (const c of chunks) expect(code.slice(c.span.start, c.span.end)).toBe(c.text);
    expect(segmentCode('def f():\n    return 1\n', 'lines').map((c) => c.text)).toEqual([
      'def f():',
      '    return 1',
    ]);
    expect(chunkLines(code, chunks[2])).toEqual({ first: 8, last: 8 });
  });

  it('handles unfinished code and finds the first new block of a sample', () => {
    expect(splitCodeBlocks('def f(x):\n    y = [1,\n  2').map((c) => c.text)).toEqual([
      'def f(x):',
      '    y = [1,\n  2',
    ]);
    expect(firstNewBlock(['def f(x):'], '    y = x + 1\n    return y')).toBe('    y = x + 1');
    expect(firstNewBlock(['def f(x):'], '    for i in x:\n        print(i)\n    return 0')).toBe(
      '    for i in x:\n        print(i)',
    );
    expect(firstNewBlock([], 'def g():\n    """Doc."""\n    return 1')).toBe('def g():\n    """Doc."""');
  });

  it('rebuilds every MBPP and HumanEval reference exactly', async () => {
    const mbpp = (await loadMbpp({ path: sharedData('mbpp/mbpp.jsonl') })).records;
    const he = (await loadHumanEval({ path: sharedData('humaneval/HumanEval.jsonl') })).records;
    let steps = 0;
    for (const p of mbpp) {
      const ref = p.meta?.code as string;
      const chunks = splitCodeBlocks(ref);
      expect(rebuildText(chunks, chunkGaps(ref, chunks))).toBe(ref);
      steps += chunks.length;
    }
    expect(steps / mbpp.length).toBeGreaterThan(2);
    for (const p of he) {
      const prompt = p.meta?.prompt as string;
      const ref = prompt + (p.meta?.canonical_solution as string);
      const body = codeSteps(ref, prompt, 'blocks');
      expect(body.length).toBeGreaterThan(0);
      expect(body[0].span.start).toBeGreaterThanOrEqual(prompt.length);
    }
  });
});
