import { describe, expect, it } from 'vitest';
import {
  extractCode,
  fencedBlocks,
  mbppEntryPoint,
  promptImports,
  truncateBodyCompletion,
} from '../../src/verify/code/extract.js';
import { assembleProgram, codeTaskOf } from '../../src/verify/code/tasks.js';

describe('code extraction', () => {
  it('takes the last fenced block that defines the entry point', () => {
    const text =
      'Here:\n```python\ndef f(x):\n    return 1\n```\nUsage:\n```python\nprint(f(2))\n```\nBetter:\n```py\ndef f(x):\n    return x\n```\n';
    expect(extractCode(text, 'f')).toBe('def f(x):\n    return x');
    expect(fencedBlocks(text).map((b) => b.lang)).toEqual(['python', 'python', 'py']);
  });

  it('takes the longest Python block without an entry point, and keeps an unclosed fence', () => {
    expect(extractCode('```\nx = 1\n```\n```python\ny = 22222\n```', undefined)).toBe('y = 22222');
    const cut = fencedBlocks('```python\ndef f():\n    return 1');
    expect(cut).toEqual([{ lang: 'python', code: 'def f():\n    return 1', unclosed: true }]);
    expect(extractCode('```text\nnot code\n```')).toBe('```text\nnot code\n```');
  });

  it('reads raw completions and MBPP markers', () => {
    expect(extractCode('[BEGIN]\ndef f():\n    return 1\n[DONE] trailing')).toBe('\ndef f():\n    return 1');
    expect(extractCode('   \n')).toBeNull();
    expect(
      truncateBodyCompletion(
        '    return x\n\ndef helper():\n    pass\n\nif __name__ == "__main__":\n    f()',
      ),
    ).toBe('    return x\n\ndef helper():\n    pass');
    expect(promptImports('from typing import List\nimport math\n\ndef f():\n    import os\n')).toBe(
      'from typing import List\nimport math',
    );
    expect(mbppEntryPoint(['assert math.isclose(area(2), 12.5)'])).toBe('area');
    expect(mbppEntryPoint(['assert set(similar((1,), (2,))) == set()'])).toBe('similar');
  });

  it('assembles HumanEval body completions and whole functions', () => {
    const problem = {
      id: 'HumanEval/x',
      source: 'humaneval',
      question: 'from typing import List\n\ndef f(xs: List[int]) -> int:\n    """Sum."""\n',
      answer: 'def check(candidate):\n    assert candidate([1, 2]) == 3\n',
      meta: { entry_point: 'f' },
    };
    const task = codeTaskOf(problem);
    expect(task.kind).toBe('humaneval');
    expect(assembleProgram(task, '    return sum(xs)\n').program).toBe(
      `${problem.question}    return sum(xs)\n`,
    );
    const whole = assembleProgram(task, '```python\ndef f(xs):\n    return sum(xs)\n```');
    expect(whole.program).toBe('from typing import List\ndef f(xs):\n    return sum(xs)\n');
  });
});

describe('continuations of an opened fence', () => {
  it('takes the code before a closing fence that was never opened, and only then', async () => {
    const { extractCode } = await import('../../src/verify/code/extract.js');
    expect(extractCode('def f():\n    return 1\n```\nThat is all.')).toBe('def f():\n    return 1');
    expect(extractCode('```text\nnot code\n```')).toBe('```text\nnot code\n```');
  });
});
