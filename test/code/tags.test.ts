import { afterAll, describe, expect, it } from 'vitest';
import { createCodeDomain } from '../../src/code/domain.js';
import { createCodePolicy } from '../../src/code/policy.js';
import { emptyCost } from '../../src/core/cost.js';
import { codeWithoutTags, parseWrittenTags } from '../../src/core/segment.js';
import type { JudgeOptions, JudgeResult, StepJudge } from '../../src/judge/types.js';
import {
  CODE_POLICY_INSTRUCTION,
  CODE_TAGS_POLICY_INSTRUCTION,
  codePrefixFromSteps,
  parseCodePolicyPrompt,
  renderCodePolicyMessages,
  renderCodePolicyPrompt,
} from '../../src/prompts/code.js';
import { sampleProblem } from '../../src/sample/sample.js';
import { runStrategy } from '../../src/search/registry.js';
import { Sandbox } from '../../src/verify/code/sandbox.js';
import { humanevalAddProblem, scriptedCodeModel, toyAddProblem } from '../support/code-problems.js';
import { scriptedModel } from '../support/scripted-model.js';

/**
 * `--segmentation tags` on code (issue 15): the code policy is asked for each block between
 * `<chunk>` lines, a step call stops at `</chunk>`, a prefix is the policy's own text up to a
 * `</chunk>`, chunks keep their indentation, and the tag lines never reach the tests.
 */

const sandbox = new Sandbox({ limits: { timeoutMs: 10_000, programTimeoutMs: 10_000 } });
afterAll(() => sandbox.close());
const domain = createCodeDomain({ sandbox, segmentation: 'tags' });

const problem = toyAddProblem;
const humaneval = humanevalAddProblem;
/** The scripted code policy answering only the tags prompt. */
const taggedCodeModel = (script: Record<string, string[]>) => scriptedCodeModel(script, 'tags');

/** A judge that calls a chunk bad when it says BUG; it records what it was shown. */
const judged: Array<{ chunks: readonly string[]; options: JudgeOptions }> = [];
const judge: StepJudge = {
  name: 'scripted',
  scalar: false,
  async judge(_p, chunks, options = {}): Promise<JudgeResult> {
    judged.push({ chunks, options });
    const judgments = (options.only ?? chunks.map((_, i) => i)).map((i) => {
      const bad = chunks[i].includes('BUG');
      return {
        chunkIndex: i,
        verdict: bad ? ('negative' as const) : ('positive' as const),
        score: bad ? 0.1 : 0.9,
      };
    });
    const firstBad = judgments.find((j) => j.verdict === 'negative');
    return {
      judgments,
      firstError: firstBad ? firstBad.chunkIndex : -1,
      cost: emptyCost(),
      formatFailures: 0,
    };
  },
};

describe('code prompts and chunks under tags', () => {
  it('the prompt asks for <chunk> lines in both forms and parses back; prefixes end right after </chunk>', () => {
    const raw = renderCodePolicyPrompt('Add.', '<chunk>\ndef add(a, b):\n</chunk>', 'tags');
    expect(raw).toContain(CODE_TAGS_POLICY_INSTRUCTION);
    expect(raw).not.toContain(CODE_POLICY_INSTRUCTION);
    expect(parseCodePolicyPrompt(raw)).toEqual({
      question: 'Add.',
      prefix: '<chunk>\ndef add(a, b):\n</chunk>',
      segmentation: 'tags',
    });
    const chat = renderCodePolicyMessages('Add.', '', 'tags');
    expect(parseCodePolicyPrompt(chat)?.segmentation).toBe('tags');
    expect(codePrefixFromSteps(['def f(x):', '    return x'], 'tags')).toBe(
      '<chunk>\ndef f(x):\n</chunk>\n<chunk>\n    return x\n</chunk>',
    );
  });

  it('code chunks keep their indentation, and removing the tag lines gives the program', () => {
    const written = '<chunk>\ndef f(x):\n    y = x\n</chunk>\n<chunk>\n    return y\n</chunk>\n';
    const parsed = parseWrittenTags(written, { keepIndent: true });
    expect(parsed.problem).toBeUndefined();
    expect(parsed.chunks.map((c) => c.text)).toEqual(['def f(x):\n    y = x', '    return y']);
    for (const c of parsed.chunks) expect(written.slice(c.span.start, c.span.end)).toBe(c.text);
    // Without keepIndent (math) contents are trimmed.
    expect(parseWrittenTags(written).chunks[1].text).toBe('return y');
    expect(codeWithoutTags(written)).toBe('def f(x):\n    y = x\n    return y\n');
    expect(codeWithoutTags('<chunk>    z = 1</chunk>')).toBe('    z = 1');
  });
});

describe('search on the code domain under tags', () => {
  it("greedy-prm: step calls stop at </chunk>, prefixes are the policy's own text, the tests run on the code", async () => {
    const first = '<chunk>\ndef add(a, b):\n</chunk>';
    // The policy leaves a blank line between chunks: a rebuilt prefix would not.
    const good = '\n\n<chunk>\n    return a + b\n';
    const model = taggedCodeModel({
      '': ['<chunk>\ndef add(a, b):\n'],
      [first]: ['\n\n<chunk>\n    return a - b  # BUG\n', good],
      [`${first}${good}</chunk>`]: ['```'],
    });
    judged.length = 0;
    const policy = createCodePolicy(model, { segmentation: 'tags' });
    const r = await runStrategy('greedy-prm', problem, { segmentation: 'tags' }, { policy, judge, domain });
    expect(r.finalText).toBe('def add(a, b):\n    return a + b');
    expect(r.correct).toBe(true);
    expect(r.chunks.map((c) => c.text)).toEqual(['def add(a, b):', '    return a + b']);
    for (const q of model.requests) expect(q.stop).toEqual(['</chunk>', '```']);
    expect(judged.every((j) => j.options.segmentation === 'tags')).toBe(true);
    expect(judged.at(-1)?.chunks).toEqual(['def add(a, b):', '    return a + b']);
  });

  it('HumanEval: the given signature is a chunk of the prefix; the code run is signature + blocks', async () => {
    const given = '<chunk>\ndef add(a, b):\n    """Return a + b."""\n</chunk>';
    const model = taggedCodeModel({
      [given]: ['\n<chunk>\n    return a + b\n'],
      [`${given}\n<chunk>\n    return a + b\n</chunk>`]: ['```'],
    });
    const policy = createCodePolicy(model, { segmentation: 'tags' });
    const r = await runStrategy('greedy-prm', humaneval, { segmentation: 'tags' }, { policy, judge, domain });
    expect(r.correct).toBe(true);
    expect(r.finalText).toBe('def add(a, b):\n    """Return a + b."""\n    return a + b');
  });

  it('best-of-n: whole solutions are split on their chunks (blocks when the tags are broken) and checked without tags', async () => {
    const solutions = [
      '<chunk>\ndef add(a, b):\n    s = a + b\n</chunk>\n<chunk>\n    return s\n</chunk>\n',
      'def add(a, b):\n    return a + b\n',
    ];
    // Each candidate of the pool is a request of its own (paired search): the k-th request is answered
    // with the k-th solution.
    let asked = 0;
    const model = scriptedModel(() => [{ text: solutions[asked++ % 2], stopReason: '\n```' }], {
      capabilities: { logprobs: false },
    });
    judged.length = 0;
    const policy = createCodePolicy(model, { segmentation: 'tags' });
    const r = await runStrategy(
      'best-of-n',
      problem,
      { segmentation: 'tags', n: 2 },
      { policy, judge, domain },
    );
    expect(r.correct).toBe(true);
    // The first: its two chunks as written (one holds two lines); the second, no tags: its blocks.
    expect(judged.map((j) => j.chunks)).toEqual([
      ['def add(a, b):\n    s = a + b', '    return s'],
      ['def add(a, b):', '    return a + b'],
    ]);
    expect(String(model.requests[0].prompt)).toContain(CODE_TAGS_POLICY_INSTRUCTION);
  });

  it('a paragraph code domain refuses a tags search config (and the other way round)', async () => {
    const model = taggedCodeModel({});
    const policy = createCodePolicy(model, { segmentation: 'tags' });
    await expect(
      runStrategy('greedy-prm', problem, { segmentation: 'paragraph' }, { policy, judge, domain }),
    ).rejects.toThrow(/segmentation/);
  });
});

describe('sample on code under tags', () => {
  it('chunks keep their indentation and the sample is checked without its tag lines', async () => {
    const text = '<chunk>\ndef add(a, b):\n</chunk>\n<chunk>\n    return a + b\n</chunk>\n```';
    const model = scriptedModel(() => [{ text }, { text: '<chunk>\ndef add(a, b):\n    return a + b\n' }], {
      capabilities: { logprobs: false },
    });
    const r = await sampleProblem(problem, {
      policy: createCodePolicy(model, { segmentation: 'tags' }),
      n: 2,
    });
    const [ok, broken] = r.samples;
    expect(ok).toMatchObject({ segmentation: 'tags', correct: true, text });
    expect(ok.chunks.map((c) => c.text)).toEqual(['def add(a, b):', '    return a + b']);
    expect(broken.segmentation).toBe('paragraph');
    expect(broken.tagProblem).toMatch(/unclosed/);
    expect(broken.text).toBe('def add(a, b):\n    return a + b\n');
    expect(broken.correct).toBe(true);
  });
});
