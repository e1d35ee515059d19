import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError, StepwiseError, UsageError } from '../../src/core/errors.js';
import {
  gsm8kFinalAnswer,
  lastBoxed,
  loadGsm8k,
  loadHumanEval,
  loadJsonlProblems,
  loadMath,
  loadMath500,
  loadMathShepherd,
  loadMbpp,
  loadPrm800k,
  loadProblems,
  loadProcessBench,
  matchBraces,
  parseFieldMapping,
  readRecords,
  streamRecords,
} from '../../src/data/index.js';
import { fixtureDir, jsonl, prm800kRow, processBenchRow } from './fixtures.js';

/** The InputError a call throws (fails the test when it throws something else or nothing). */
async function inputError(run: () => unknown): Promise<InputError> {
  try {
    await run();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError');
}

describe('answer normalisation', () => {
  it('GSM8K: text after the last ####, commas removed', () => {
    expect(gsm8kFinalAnswer('a\nb <<1+1=2>>2\n#### 1,234')).toBe('1234');
    expect(gsm8kFinalAnswer('#### -5')).toBe('-5');
    expect(gsm8kFinalAnswer('no marker')).toBeNull();
    expect(gsm8kFinalAnswer('####   ')).toBeNull();
  });

  it('MATH: content of the last \\boxed{} with nested braces', () => {
    expect(lastBoxed('so $\\boxed{\\frac{1}{2}}$.')).toBe('\\frac{1}{2}');
    expect(lastBoxed('\\boxed{1} then \\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}')).toBe(
      '\\left( 3, \\frac{\\pi}{2} \\right)',
    );
    expect(lastBoxed('\\boxed{\\{1,2\\}}')).toBe('\\{1,2\\}');
    expect(lastBoxed('$\\boxed 5$')).toBe('5');
    expect(lastBoxed('\\fbox{7}')).toBe('7');
    expect(lastBoxed('\\boxed{1} and \\boxed{unclosed')).toBeNull();
    expect(lastBoxed('nothing')).toBeNull();
    expect(lastBoxed('\\boxedx{3}')).toBeNull();
  });

  it('matchBraces finds the matching close brace', () => {
    expect(matchBraces('{a{b}c}d', 0)).toEqual({ inner: 'a{b}c', end: 7 });
    expect(matchBraces('{a\\}b}', 0)).toEqual({ inner: 'a\\}b', end: 6 });
    expect(matchBraces('x{', 1)).toBeNull();
    expect(matchBraces('x', 0)).toBeNull();
  });
});

describe('readRecords', () => {
  it('reads JSONL with line numbers, skipping blank lines', () => {
    const dir = fixtureDir({ 'a.jsonl': '{"a":1}\n\n{"a":2}\r\n' });
    const { records } = readRecords(`${dir}/a.jsonl`);
    expect(records.map((r) => [r.location.line, r.ordinal, r.value])).toEqual([
      [1, 0, { a: 1 }],
      [3, 1, { a: 2 }],
    ]);
  });

  it('reads JSON arrays with indices, gzip, and pretty-printed objects one after another', () => {
    const dir = fixtureDir({
      'a.json': '[{"a":1},{"a":2}]',
      'b.jsonl.gz': gzipSync('{"b":1}\n{"b":2}\n'),
      'c.jsonl': '{\n  "c": "x { y"\n}\n{\n  "c": 2\n}\n',
    });
    expect(readRecords(`${dir}/a.json`).records.map((r) => r.location.index)).toEqual([0, 1]);
    expect(readRecords(`${dir}/b.jsonl.gz`).records.map((r) => r.value)).toEqual([{ b: 1 }, { b: 2 }]);
    const c = readRecords(`${dir}/c.jsonl`).records;
    expect(c.map((r) => [r.location.line, r.value])).toEqual([
      [1, { c: 'x { y' }],
      [4, { c: 2 }],
    ]);
  });

  it('a broken line names file and line; skipInvalid counts it', async () => {
    const dir = fixtureDir({ 'bad.jsonl': '{"a":1}\n{"a":2}\n{"a":\n{"a":4}\n' });
    const err = await inputError(() => readRecords(`${dir}/bad.jsonl`));
    expect(err.location).toEqual({ file: `${dir}/bad.jsonl`, line: 3 });
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/bad\.jsonl, line 3: not valid JSON/);
    const skipped = readRecords(`${dir}/bad.jsonl`, { skipInvalid: true });
    expect(skipped.skipped).toBe(1);
    expect(skipped.records.map((r) => r.ordinal)).toEqual([0, 1, 3]);
  });

  it('streams big JSONL files line by line with the same locations (plain and gzip)', async () => {
    const text = '{"a":1}\r\n\n{"a":\n{"a":3}\n';
    const dir = fixtureDir({ 'big.jsonl': text, 'big.jsonl.gz': gzipSync(text) });
    for (const file of [`${dir}/big.jsonl`, `${dir}/big.jsonl.gz`]) {
      const items = [];
      for await (const item of streamRecords(file, { streamAboveBytes: 0 })) items.push(item);
      expect(items).toEqual([
        { location: { file, line: 1 }, ordinal: 0, value: { a: 1 } },
        { location: { file, line: 3 }, ordinal: 1, error: expect.stringMatching(/^not valid JSON/) },
        { location: { file, line: 4 }, ordinal: 2, value: { a: 3 } },
      ]);
      const whole = [];
      for await (const item of streamRecords(file)) whole.push(item);
      expect(whole).toEqual(items);
    }
  });

  it('a broken JSON array and a missing file are InputErrors', async () => {
    const dir = fixtureDir({ 'a.json': '[\n{"a":1},\n{"a" 2}\n]' });
    const err = await inputError(() => readRecords(`${dir}/a.json`));
    expect(err.message).toMatch(/not a valid JSON array/);
    expect((await inputError(() => readRecords(`${dir}/none.jsonl`))).message).toMatch(/file not found/);
  });
});

describe('GSM8K loader', () => {
  const rows = [
    { question: 'Q0?', answer: 'work\n#### 1,000' },
    { question: 'Q1?', answer: 'work\n#### 7' },
    { question: 'Q2?', answer: 'no final answer' },
  ];

  it('normalises answers and keeps the solution', async () => {
    const dir = fixtureDir({ 'test.jsonl': jsonl(rows.slice(0, 2)) });
    const { records, path } = await loadGsm8k({ path: `${dir}/test.jsonl` });
    expect(path).toBe(`${dir}/test.jsonl`);
    expect(records[0]).toEqual({
      id: 'gsm8k/test/0',
      question: 'Q0?',
      answer: '1000',
      domain: 'math',
      source: 'gsm8k',
      meta: { solution: 'work\n#### 1,000' },
    });
    // A folder resolves to <folder>/<split>.jsonl.
    expect((await loadGsm8k({ path: dir, limit: 1 })).records).toHaveLength(1);
  });

  it('a record without #### names file, line and field; --skip-invalid counts it', async () => {
    const dir = fixtureDir({ 'test.jsonl': jsonl(rows) });
    const err = await inputError(() => loadGsm8k({ path: `${dir}/test.jsonl` }));
    expect(err.location).toEqual({ file: `${dir}/test.jsonl`, line: 3, field: 'answer' });
    const ok = await loadGsm8k({ path: `${dir}/test.jsonl`, skipInvalid: true });
    expect([ok.records.length, ok.skipped]).toEqual([2, 1]);
  });

  it('a missing or mistyped field is named', async () => {
    const dir = fixtureDir({
      'test.jsonl': jsonl([
        { question: 'Q', answer: '#### 1' },
        { question: 5, answer: 'x' },
      ]),
    });
    const err = await inputError(() => loadGsm8k({ path: `${dir}/test.jsonl` }));
    expect(err.location).toMatchObject({ line: 2, field: 'question' });
    expect(err.message).toMatch(/line 2, field "question": Invalid input: expected string, received number$/);
    const missing = fixtureDir({ 'test.jsonl': jsonl([{ answer: '#### 1' }]) });
    const err2 = await inputError(() => loadGsm8k({ path: `${missing}/test.jsonl` }));
    expect(err2.message).toMatch(/line 1, field "question": missing \(expected string\)$/);
  });
});

describe('MATH loaders', () => {
  it('MATH: answer from the last \\boxed{}, level as a number, subject from type', async () => {
    const dir = fixtureDir({
      'test.jsonl': jsonl([
        {
          problem: 'P',
          level: 'Level 3',
          type: 'Algebra',
          solution: 'x $\\boxed{1}$ and $\\boxed{\\frac{a}{b}}$',
        },
      ]),
    });
    const [p] = (await loadMath({ path: dir })).records;
    expect(p).toMatchObject({ id: 'math/test/0', answer: '\\frac{a}{b}', source: 'math' });
    expect(p.meta).toMatchObject({ level: 3, subject: 'Algebra' });
  });

  it('MATH-500: the answer field and unique_id win', async () => {
    const dir = fixtureDir({
      'test.jsonl': jsonl([
        {
          problem: 'P',
          solution: '\\boxed{2}',
          answer: '2.0',
          subject: 'Geometry',
          level: 2,
          unique_id: 'test/geometry/1.json',
        },
      ]),
    });
    const [p] = (await loadMath500({ path: `${dir}/test.jsonl` })).records;
    expect(p).toMatchObject({ id: 'test/geometry/1.json', answer: '2.0', source: 'math500' });
    expect(p.meta).toMatchObject({ level: 2, subject: 'Geometry', unique_id: 'test/geometry/1.json' });
  });

  it('no answer anywhere names the solution field', async () => {
    const dir = fixtureDir({ 'test.jsonl': jsonl([{ problem: 'P', solution: 'no box' }]) });
    const err = await inputError(() => loadMath({ path: dir }));
    expect(err.location).toMatchObject({ line: 1, field: 'solution' });
  });
});

describe('ProcessBench loader', () => {
  it('reads the subset files of a folder in order, or one file', async () => {
    const dir = fixtureDir({
      'math.json': JSON.stringify([processBenchRow(10, { id: 'math-0', label: 1 })]),
      'gsm8k.json': JSON.stringify([processBenchRow(0), processBenchRow(1)]),
      'other.json': '[]',
    });
    const all = await loadProcessBench({ path: dir });
    expect(all.records.map((r) => [r.id, r.subset, r.label])).toEqual([
      ['gsm8k-0', 'gsm8k', -1],
      ['gsm8k-1', 'gsm8k', -1],
      ['math-0', 'math', 1],
    ]);
    expect((await loadProcessBench({ path: dir, split: 'math' })).records).toHaveLength(1);
    expect((await loadProcessBench({ path: dir, limit: 2 })).records).toHaveLength(2);
    expect((await loadProcessBench({ path: `${dir}/math.json` })).records[0].subset).toBe('math');
  });

  it('bad records name file, array index and field', async () => {
    const dir = fixtureDir({
      'gsm8k.json': JSON.stringify([processBenchRow(0), processBenchRow(1, { label: 5 })]),
      'math.json': JSON.stringify([processBenchRow(0, { steps: 'one string' })]),
    });
    const late = await inputError(() => loadProcessBench({ path: `${dir}/gsm8k.json` }));
    expect(late.location).toEqual({ file: `${dir}/gsm8k.json`, index: 1, field: 'label' });
    expect(late.message).toMatch(/index 1, field "label": label 5 points past the last step/);
    const type = await inputError(() => loadProcessBench({ path: `${dir}/math.json` }));
    expect(type.location).toMatchObject({ index: 0, field: 'steps' });
    const skipped = await loadProcessBench({ path: dir, skipInvalid: true });
    expect([skipped.records.length, skipped.skipped]).toEqual([1, 2]);
  });

  it('a folder without subset files is a clear error', async () => {
    await expect(loadProcessBench({ path: fixtureDir({ 'x.txt': '' }) })).rejects.toThrow(
      /no ProcessBench files/,
    );
  });
});

describe('PRM800K loader', () => {
  it('follows chosen, then human, then first completion; neutral counted per convention', async () => {
    const dir = fixtureDir({ 'phase2_test.jsonl': jsonl([prm800kRow([1, 0])]) });
    const positive = (await loadPrm800k({ path: dir })).records[0];
    expect(positive).toMatchObject({
      id: 'prm800k/phase2_test/0',
      problem: 'Compute 2+2.',
      answer: '4',
      steps: ['step 0', 'step 1', 'human step', 'final mistake'],
      ratings: [1, 0, null, -1],
      labels: [true, true, true, false],
      firstError: 3,
      finishReason: 'found_error',
      neutralAs: 'positive',
    });
    const negative = (await loadPrm800k({ path: dir, neutralAs: 'negative' })).records[0];
    expect(negative.labels).toEqual([true, false, true, false]);
    expect(negative.firstError).toBe(1);
  });

  it('a bad rating names the nested field; a bad chosen index too', async () => {
    const bad = prm800kRow([1]);
    (
      bad.label as { steps: Array<{ completions: Array<{ rating: number }> }> }
    ).steps[0].completions[1].rating = 2;
    const badIndex = prm800kRow([1]);
    (badIndex.label as { steps: Array<{ chosen_completion: number }> }).steps[0].chosen_completion = 9;
    const dir = fixtureDir({ 'a.jsonl': jsonl([prm800kRow([1]), bad]), 'b.jsonl': jsonl([badIndex]) });
    const err = await inputError(() => loadPrm800k({ path: `${dir}/a.jsonl` }));
    expect(err.location).toMatchObject({ line: 2, field: 'label.steps[0].completions[1].rating' });
    const err2 = await inputError(() => loadPrm800k({ path: `${dir}/b.jsonl` }));
    expect(err2.location).toMatchObject({ line: 1, field: 'label.steps[0].chosen_completion' });
  });

  it('rejects an unknown neutral convention', async () => {
    const dir = fixtureDir({ 'a.jsonl': jsonl([prm800kRow([1])]) });
    await expect(loadPrm800k({ path: `${dir}/a.jsonl`, neutralAs: 'maybe' as 'positive' })).rejects.toThrow(
      UsageError,
    );
  });
});

describe('Math-Shepherd loader', () => {
  const input = 'Tom has 3 apples and buys 2. How many? Step 1: 3 + 2 = 5. ки\nStep 2: The answer is: 6 ки';
  const label = 'Tom has 3 apples and buys 2. How many? Step 1: 3 + 2 = 5. +\nStep 2: The answer is: 6 -';

  it('splits question, steps and +/- labels', async () => {
    const dir = fixtureDir({ 'math-shepherd.jsonl': jsonl([{ input, label, task: 'GSM8K' }]) });
    const [r] = (await loadMathShepherd({ path: dir })).records;
    expect(r).toEqual({
      id: 'mathshepherd/math-shepherd/0',
      question: 'Tom has 3 apples and buys 2. How many?',
      steps: ['Step 1: 3 + 2 = 5.', 'Step 2: The answer is: 6'],
      labels: [true, false],
      firstError: 1,
      task: 'GSM8K',
    });
  });

  it('a label that does not match its input is named', async () => {
    const dir = fixtureDir({
      'a.jsonl': jsonl([{ input, label: label.replace('5. +', '5. ?'), task: 'GSM8K' }]),
      'b.jsonl': jsonl([{ input: 'no steps ки', label: 'no steps +', task: 'MATH' }]),
    });
    const err = await inputError(() => loadMathShepherd({ path: `${dir}/a.jsonl` }));
    expect(err.location).toMatchObject({ line: 1, field: 'label' });
    expect(err.message).toMatch(/expected "\+" or "-" at step tag 1/);
    const c = fixtureDir({
      'c.jsonl': jsonl([{ input, label: label.replace('Tom', 'Tim'), task: 'GSM8K' }]),
    });
    expect((await inputError(() => loadMathShepherd({ path: `${c}/c.jsonl` }))).message).toMatch(
      /field "label": does not match input before step tag 1/,
    );
    expect((await inputError(() => loadMathShepherd({ path: `${dir}/b.jsonl` }))).location.field).toBe(
      'input',
    );
  });
});

describe('code loaders', () => {
  it('HumanEval: prompt as question, tests as answer, fields in meta', async () => {
    const row = {
      task_id: 'HumanEval/0',
      prompt: 'def f():\n',
      entry_point: 'f',
      canonical_solution: '  return 1\n',
      test: 'def check(c): assert c() == 1\n',
    };
    const dir = fixtureDir({ 'HumanEval.jsonl.gz': gzipSync(jsonl([row])) });
    const [p] = (await loadHumanEval({ path: dir })).records;
    expect(p).toEqual({
      id: 'HumanEval/0',
      question: row.prompt,
      answer: row.test,
      domain: 'code',
      source: 'humaneval',
      meta: {
        prompt: row.prompt,
        entry_point: 'f',
        canonical_solution: row.canonical_solution,
        test: row.test,
      },
    });
  });

  it('MBPP: asserts as answer, splits by task id, bad test_list named', async () => {
    const row = (task_id: number) => ({
      task_id,
      text: `Task ${task_id}`,
      code: 'def f():\r\n\treturn 1',
      test_list: ['assert f() == 1'],
      test_setup_code: '',
      challenge_test_list: [],
    });
    const dir = fixtureDir({
      'mbpp.jsonl': jsonl([row(1), row(11), row(600), row(601)]),
      'bad.jsonl': jsonl([{ ...row(2), test_list: [] }]),
    });
    const all = await loadMbpp({ path: dir });
    expect(all.records.map((p) => p.id)).toEqual(['mbpp/1', 'mbpp/11', 'mbpp/600', 'mbpp/601']);
    expect(all.records[0]).toMatchObject({ answer: 'assert f() == 1', domain: 'code' });
    expect(all.records[0].meta).toMatchObject({
      code: 'def f():\n\treturn 1',
      test_list: ['assert f() == 1'],
    });
    expect((await loadMbpp({ path: dir, split: 'test' })).records.map((p) => p.id)).toEqual(['mbpp/11']);
    expect((await loadMbpp({ path: dir, split: 'validation' })).records.map((p) => p.id)).toEqual([
      'mbpp/600',
    ]);
    await expect(loadMbpp({ path: dir, split: 'dev' })).rejects.toThrow(UsageError);
    const err = await inputError(() => loadMbpp({ path: `${dir}/bad.jsonl` }));
    expect(err.location).toMatchObject({ line: 1, field: 'test_list' });
  });
});

describe('generic JSONL loader', () => {
  it('maps fields (dotted paths allowed), stringifies numeric answers, keeps the rest in meta', async () => {
    const dir = fixtureDir({
      'mine.jsonl': jsonl([
        { uid: 'a', q: { text: 'What?' }, gold: 42, extra: true },
        { q: { text: 'Why?' }, gold: 'because' },
      ]),
    });
    const fields = parseFieldMapping('id=uid, question=q.text,answer=gold');
    const { records } = await loadJsonlProblems({ path: `${dir}/mine.jsonl`, fields, domain: 'code' });
    expect(records[0]).toEqual({
      id: 'a',
      question: 'What?',
      answer: '42',
      domain: 'code',
      source: 'mine',
      meta: { q: { text: 'What?' }, extra: true },
    });
    expect(records[1].id).toBe('mine/1');
  });

  it('a missing mapped field is named; a path is required; bad mappings are usage errors', async () => {
    const dir = fixtureDir({ 'mine.jsonl': jsonl([{ question: 'Q', answer: 1 }, { question: 'Q' }]) });
    const err = await inputError(() => loadJsonlProblems({ path: `${dir}/mine.jsonl` }));
    expect(err.message).toBe(
      `${dir}/mine.jsonl, line 2, field "answer": expected a string or number, got nothing (field missing)`,
    );
    await expect(loadJsonlProblems({})).rejects.toThrow(UsageError);
    expect(() => parseFieldMapping('answer')).toThrow(UsageError);
    expect(() => parseFieldMapping('gold=x')).toThrow(UsageError);
  });
});

describe('loadProblems and data locations', () => {
  const saved = { data: process.env.STEPWISE_DATA, cache: process.env.STEPWISE_CACHE };
  afterEach(() => {
    process.env.STEPWISE_DATA = saved.data;
    if (saved.cache === undefined) delete process.env.STEPWISE_CACHE;
    else process.env.STEPWISE_CACHE = saved.cache;
  });

  it('returns core Problems for every kind of set', async () => {
    const dir = fixtureDir({
      'processbench/gsm8k.json': JSON.stringify([processBenchRow(0, { label: 1 })]),
      'prm800k/phase2_test.jsonl': jsonl([prm800kRow([1])]),
    });
    process.env.STEPWISE_DATA = dir;
    const pb = await loadProblems('processbench');
    expect(pb.problems[0]).toMatchObject({
      id: 'gsm8k-0',
      question: 'What is 0 + 1?',
      answer: '',
      domain: 'math',
    });
    expect(pb.problems[0].meta).toMatchObject({
      label: 1,
      subset: 'gsm8k',
      steps: ['We add 1 to 0.', 'So the answer is 1.'],
    });
    const prm = await loadProblems('prm800k');
    expect(prm.problems[0]).toMatchObject({ answer: '4', source: 'prm800k' });
    expect(prm.problems[0].meta).toMatchObject({ firstError: 2, neutralAs: 'positive' });
  });

  it('without a path: $STEPWISE_DATA first, then the pull cache, else a clear error (exit 2)', async () => {
    const data = fixtureDir({ 'gsm8k/test.jsonl': jsonl([{ question: 'from data', answer: '#### 1' }]) });
    const cache = fixtureDir({
      'data/gsm8k/test.jsonl': jsonl([{ question: 'from cache', answer: '#### 1' }]),
      'data/gsm8k/train.jsonl': jsonl([{ question: 'cache train', answer: '#### 2' }]),
    });
    process.env.STEPWISE_DATA = data;
    process.env.STEPWISE_CACHE = cache;
    expect((await loadProblems('gsm8k')).problems[0].question).toBe('from data');
    expect((await loadProblems('gsm8k', { split: 'train' })).problems[0].question).toBe('cache train');
    process.env.STEPWISE_DATA = fixtureDir({});
    expect((await loadProblems('gsm8k')).problems[0].question).toBe('from cache');
    let err: unknown;
    try {
      await loadProblems('mbpp');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StepwiseError);
    expect((err as StepwiseError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(
      /no mbpp data found; pass --path, set STEPWISE_DATA, or run `stepwise data pull mbpp`/,
    );
  });
});
