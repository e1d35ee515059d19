/**
 * Getting Python code out of a model's answer: fenced blocks (```python … ```), or the raw
 * completion (HumanEval style: a function body that continues the prompt).
 */

/** One fenced block: its language tag (lower case, may be empty) and its code. */
export interface FencedBlock {
  lang: string;
  code: string;
  /** True when the closing fence is missing (a generation cut off by the token limit). */
  unclosed: boolean;
}

const PYTHON_TAGS = new Set(['', 'python', 'py', 'python3', 'py3']);

/** Every ``` fenced block in `text`, in order; an unclosed last fence runs to the end. */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const open = /^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*\n/gm;
  let m = open.exec(text);
  while (m) {
    const fence = m[1];
    const bodyStart = m.index + m[0].length;
    const close = new RegExp(`^[ \\t]*${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`, 'm');
    const rest = text.slice(bodyStart);
    const c = close.exec(rest);
    if (!c) {
      blocks.push({ lang: m[2].toLowerCase(), code: rest.replace(/\s+$/, ''), unclosed: true });
      break;
    }
    blocks.push({
      lang: m[2].toLowerCase(),
      code: rest.slice(0, c.index).replace(/\s+$/, ''),
      unclosed: false,
    });
    open.lastIndex = bodyStart + c.index + c[0].length;
    m = open.exec(text);
  }
  return blocks;
}

/** True when `code` defines `name` at top level (`def name(` or `async def name(`). */
export function definesFunction(code: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(?:async[ \\t]+)?def[ \\t]+${escaped}[ \\t]*\\(`, 'm').test(code);
}

/**
 * The Python code of an answer. Among fenced Python blocks, the last one that defines
 * `entryPoint` wins (models often show usage examples in later blocks); failing that, the
 * longest Python block. Without fences, the text itself, minus MBPP's `[BEGIN]`/`[DONE]` markers.
 * Returns null for an answer with no code at all.
 */
export function extractCode(answer: string, entryPoint?: string): string | null {
  // A continuation of a prompt that opened the fence (the code policy's raw form) closes a fence
  // it never opened: the code is what comes before that closing line.
  const fences = [...answer.matchAll(/^```.*$/gm)];
  const unopened = fences.length % 2 === 1 && /^```[ \t]*$/.test(fences[0][0]);
  const text = unopened ? answer.slice(0, fences[0].index) : answer;
  const blocks = fencedBlocks(text).filter((b) => PYTHON_TAGS.has(b.lang) && b.code.trim() !== '');
  if (blocks.length > 0) {
    if (entryPoint) {
      const defining = blocks.filter((b) => definesFunction(b.code, entryPoint));
      if (defining.length > 0) return defining[defining.length - 1].code;
    }
    return blocks.reduce((a, b) => (b.code.length > a.code.length ? b : a)).code;
  }
  const raw = text
    .replace(/\[BEGIN\]/g, '')
    .replace(/\[DONE\][\s\S]*$/, '')
    .replace(/\s+$/, '');
  return raw.trim() === '' ? null : raw;
}

/**
 * Cut a raw HumanEval body completion where the function obviously ends: at the first line in
 * column 0 that starts a test or script (`if __name__`, `print(`, `assert `, `# Test`, ``` ).
 * Helper functions written after the body are kept.
 */
export function truncateBodyCompletion(completion: string): string {
  const stop = /^(?:if __name__|print\(|assert\b|#\s*(?:test|example)|```)/im;
  const lines = completion.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (stop.test(line)) break;
    out.push(line);
  }
  return out.join('\n').replace(/\s+$/, '');
}

/** The import lines of a HumanEval prompt (a model that rewrites the whole function often drops them). */
export function promptImports(prompt: string): string {
  return prompt
    .split('\n')
    .filter((l) => /^(?:import\s|from\s+\S+\s+import\s)/.test(l))
    .join('\n');
}

/** The function name the first MBPP assert calls (`assert foo(…) == …`, also inside `set(…)`, `math.isclose(…)`). */
export function mbppEntryPoint(tests: readonly string[]): string | undefined {
  const skip = new Set([
    'set',
    'sorted',
    'list',
    'tuple',
    'str',
    'int',
    'float',
    'round',
    'abs',
    'len',
    'isclose',
  ]);
  for (const t of tests) {
    const calls = t.matchAll(/([A-Za-z_][\w.]*)\s*\(/g);
    for (const c of calls) {
      const name = c[1].split('.').pop() ?? '';
      if (!skip.has(name) && name !== 'assert') return name;
    }
  }
  return undefined;
}
