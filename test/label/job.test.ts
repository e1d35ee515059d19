import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../src/core/errors.js';
import type { Problem } from '../../src/core/types.js';
import { readLabelInput } from '../../src/label/input.js';
import { labelsSidecarPath, runLabelJob, summarizeSignals } from '../../src/label/job.js';
import type { LabeledSolutionRecord } from '../../src/label/label.js';
import { createPolicy } from '../../src/models/policy.js';
import { tempDir } from '../support/temp.js';
import { boxedChecker, createFakePolicyModel } from './fake-model.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('stepwise-label-job-');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, lines: unknown[]): string {
  const file = join(dir, name);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return file;
}

function read(file: string): LabeledSolutionRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

describe('readLabelInput', () => {
  it('reads rows {id, problem, answer, steps} (question as alias, numeric answers)', () => {
    const file = write('rows.jsonl', [
      { id: 'a', problem: 'P?', answer: '42', steps: ['x', 'y'], final_answer_correct: true },
      { id: 'b', question: 'Q?', answer: 7, steps: ['z'] },
    ]);
    const s = readLabelInput(file);
    expect(s.map((x) => [x.id, x.problem.question, x.problem.answer, x.chunks, x.correct])).toEqual([
      ['a', 'P?', '42', ['x', 'y'], true],
      ['b', 'Q?', '7', ['z'], undefined],
    ]);
  });

  it('reads `stepwise sample` output: one solution per sample, id <problemId>#<k>', () => {
    const file = write('sample.jsonl', [
      {
        id: 'gsm8k/test/0',
        gold: '18',
        samples: [
          {
            text: 'a\n\nb',
            chunks: [
              { index: 0, text: 'a', span: { start: 0, end: 1 } },
              { index: 1, text: 'b' },
            ],
            correct: true,
          },
          { text: 'c\n\nd\n\ne', correct: false },
        ],
      },
    ]);
    const problems = new Map<string, Problem>([
      [
        'gsm8k/test/0',
        { id: 'gsm8k/test/0', question: 'Janet?', answer: '18', domain: 'math', source: 'gsm8k' },
      ],
    ]);
    const s = readLabelInput(file, { problems });
    expect(s.map((x) => [x.id, x.problem.question, x.problem.answer, x.chunks, x.correct])).toEqual([
      ['gsm8k/test/0#0', 'Janet?', '18', ['a', 'b'], true],
      ['gsm8k/test/0#1', 'Janet?', '18', ['c', 'd', 'e'], false],
    ]);
    // Without the problems the question is missing, and the message says what to pass.
    expect(() => readLabelInput(file)).toThrow(/--dataset/);
  });

  it('names file, line and field of a bad record', () => {
    const noAnswer = write('bad1.jsonl', [
      { id: 'a', problem: 'P', answer: '1', steps: ['x'] },
      { id: 'b', problem: 'P', steps: ['x'] },
    ]);
    expect(() => readLabelInput(noAnswer)).toThrow(InputError);
    expect(() => readLabelInput(noAnswer)).toThrow(/bad1\.jsonl, line 2, field "answer"/);
    const badSteps = write('bad2.jsonl', [{ id: 'a', problem: 'P', answer: '1', steps: 'x' }]);
    expect(() => readLabelInput(badSteps)).toThrow(/field "steps"/);
    const dup = write('bad3.jsonl', [
      { id: 'a', problem: 'P', answer: '1', steps: ['x'] },
      { id: 'a', problem: 'P', answer: '1', steps: ['y'] },
    ]);
    expect(() => readLabelInput(dup)).toThrow(/line 2.*duplicate/);
  });
});

describe('runLabelJob', () => {
  const rate = (prefix: string) => (prefix.includes('BAD') ? 0 : 1);

  it('samples of one problem share the empty prefix: one request for it', async () => {
    const file = write('shared.jsonl', [
      {
        id: 'p',
        question: 'What is 6 × 7?',
        answer: '42',
        samples: [{ text: 'a\n\nb' }, { text: 'a\n\nBAD' }, { text: 'c' }],
      },
    ]);
    const model = createFakePolicyModel(rate);
    const out = join(dir, 'shared.out.jsonl');
    const summary = await runLabelJob({
      solutions: readLabelInput(file),
      policy: createPolicy(model),
      checker: boxedChecker,
      out,
      config: { rollouts: 4, signals: ['abs-q', 'ms-soft'] },
    });
    // Rolled-out prefixes: '' (shared by all three) and 'a' (shared by two) → 2 requests for
    // 2 + 2 + 1 = 5 estimates; each whole solution is checked, not rolled out from.
    expect(model.calls).toHaveLength(2);
    expect(summary.spent.policy.calls).toBe(2);
    expect(summary.rollouts).toBe(5 * 4);
    const recs = read(out);
    expect(recs.map((r) => r.id)).toEqual(['p#0', 'p#1', 'p#2']);
    // None of the samples has the boxed answer: every last chunk is negative by the check.
    expect(recs.map((r) => r.finalAnswerCorrect)).toEqual([false, false, false]);
    expect(recs.map((r) => r.firstError['abs-q'])).toEqual([1, 1, 0]);
    expect(summary.signals['abs-q']).toEqual({ positive: 2, labeled: 5, share: 0.4, withError: 3 });
    expect(summary.signals['ms-soft']?.share).toBe(0.4);

    // Rerun: everything is in the output already; no model call.
    const again = await runLabelJob({
      solutions: readLabelInput(file),
      policy: createPolicy(model),
      checker: boxedChecker,
      out,
      config: { rollouts: 4, signals: ['abs-q', 'ms-soft'] },
    });
    expect(model.calls).toHaveLength(2);
    expect(again.resumed).toBe(3);
    expect(read(out)).toEqual(recs);
  });

  it('early stop: abs-q labels unchanged, fewer rollouts', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => ({
      id: `r${i}`,
      problem: `Q${i}`,
      answer: '42',
      steps: ['a', 'b', i % 2 ? 'BAD' : 'c', 'd'],
    }));
    const file = write('early.jsonl', rows);
    const half = (prefix: string) => (prefix.includes('BAD') ? 0 : 0.5);
    const full = await runLabelJob({
      solutions: readLabelInput(file),
      policy: createPolicy(createFakePolicyModel(half)),
      checker: boxedChecker,
      out: join(dir, 'early-full.jsonl'),
      config: { rollouts: 16, signals: ['abs-q', 'sorm'] },
    });
    const early = await runLabelJob({
      solutions: readLabelInput(file),
      policy: createPolicy(createFakePolicyModel(half)),
      checker: boxedChecker,
      out: join(dir, 'early.out.jsonl'),
      config: { rollouts: 16, signals: ['abs-q', 'sorm'], earlyStop: 2 },
    });
    expect(read(join(dir, 'early.out.jsonl')).map((r) => r.firstError)).toEqual(
      read(join(dir, 'early-full.jsonl')).map((r) => r.firstError),
    );
    expect(early.rollouts).toBeLessThan(full.rollouts / 2);
  });

  it("--keep-rollouts: each chunk carries its prefix's continuations [{text, correct}], never the prefix", async () => {
    const file = write('keep.jsonl', [
      { id: 'k', problem: 'What is 6 × 7?', answer: '42', steps: ['first step', 'BAD step', 'last step'] },
    ]);
    const half = (prefix: string) => (prefix.includes('BAD') ? 0 : 0.5);
    const out = join(dir, 'keep.out.jsonl');
    const options = {
      policy: createPolicy(createFakePolicyModel(half)),
      checker: boxedChecker,
      out,
      config: { rollouts: 6, signals: ['abs-q' as const] },
    };
    await runLabelJob({
      ...options,
      config: { ...options.config, keepRollouts: true },
      solutions: readLabelInput(file),
    });
    const [rec] = read(out);
    expect(rec.emptyPrefixRollouts).toHaveLength(6);
    // The whole solution is checked, not rolled out from: its chunk keeps no rollout.
    expect(rec.chunks[2].rollouts).toEqual([]);
    for (const c of rec.chunks.slice(0, 2)) {
      const kept = c.rollouts as Array<{ text: string; correct: boolean }>;
      expect(Array.isArray(kept)).toBe(true);
      expect(kept).toHaveLength(6);
      // Q̂ is the share of the kept rollouts that are correct: they are the ones the label rests on.
      expect(kept.filter((r) => r.correct).length / kept.length).toBe(c.q);
      for (const r of kept) {
        expect(Object.keys(r).sort()).toEqual(['correct', 'text']);
        expect(r.text.startsWith('So the answer is')).toBe(true);
        expect(r.correct).toBe(r.text.includes('{42}'));
      }
    }
    expect((rec.chunks[1].rollouts as unknown[]).length).toBe(6);
    expect(rec.chunks[1].q).toBe(0);
    // Without the flag: counts only; a resume must not mix the two kinds of record.
    await expect(runLabelJob({ ...options, solutions: readLabelInput(file) })).rejects.toThrow(
      /labeled with --keep-rollouts/,
    );
    const plain = join(dir, 'keep-plain.jsonl');
    await runLabelJob({ ...options, out: plain, solutions: readLabelInput(file) });
    expect(read(plain)[0].chunks.map((c) => c.rollouts)).toEqual([6, 6, 0]);
    expect(read(plain)[0].emptyPrefixRollouts).toBeUndefined();
    await expect(
      runLabelJob({
        ...options,
        config: { ...options.config, keepRollouts: true },
        out: plain,
        solutions: readLabelInput(file),
      }),
    ).rejects.toThrow(/labeled without --keep-rollouts/);
  });

  it('refuses to resume from a file that does not hold label records (e.g. the input)', async () => {
    const file = write('self.jsonl', [{ id: 'x', problem: 'Q', answer: '42', steps: ['a'] }]);
    await expect(
      runLabelJob({
        solutions: readLabelInput(file),
        policy: createPolicy(createFakePolicyModel(rate)),
        checker: boxedChecker,
        out: file,
        config: { rollouts: 2, signals: ['abs-q'] },
      }),
    ).rejects.toThrow(/self\.jsonl, line 1: not a `stepwise label` record/);
  });

  it('processbench format: rows from the chosen signal, full labels kept beside them', async () => {
    const file = write('pb.jsonl', [
      { id: 'x', problem: 'Q', answer: '42', steps: ['a', 'BAD', 'c'] },
      { id: 'y', problem: 'Q', answer: '42', steps: ['a', 'b'], final_answer_correct: true },
    ]);
    const out = join(dir, 'pb.out.jsonl');
    const summary = await runLabelJob({
      solutions: readLabelInput(file),
      policy: createPolicy(createFakePolicyModel(rate)),
      checker: boxedChecker,
      out,
      config: {
        rollouts: 2,
        signals: ['rel-ratio', 'abs-q'],
        format: 'processbench',
        processbenchSignal: 'abs-q',
      },
    });
    expect(summary.labelsFile).toBe(labelsSidecarPath(out));
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        id: 'x',
        generator: 'fake-policy',
        problem: 'Q',
        steps: ['a', 'BAD', 'c'],
        label: 1,
        final_answer_correct: false,
      },
      {
        id: 'y',
        generator: 'fake-policy',
        problem: 'Q',
        steps: ['a', 'b'],
        label: -1,
        final_answer_correct: true,
      },
    ]);
    expect(read(labelsSidecarPath(out))).toHaveLength(2);
    await expect(
      runLabelJob({
        solutions: readLabelInput(file),
        policy: createPolicy(createFakePolicyModel(rate)),
        checker: boxedChecker,
        out: join(dir, 'pb2.jsonl'),
        config: { rollouts: 2, signals: ['abs-q'], format: 'processbench', processbenchSignal: 'sorm' },
      }),
    ).rejects.toThrow(UsageError);
  });

  it('summarizeSignals leaves out undetermined labels and counts soft ones by threshold', () => {
    const rec = (labels: Array<boolean | number | null>, fe: number): LabeledSolutionRecord => ({
      id: 'r',
      problem: 'p',
      answer: '1',
      q0: null,
      chunks: labels.map((v) => ({
        text: 't',
        q: null,
        rollouts: 0,
        labels: { 'abs-q': v as boolean | null, 'ms-soft': 0.25 },
      })),
      firstError: { 'abs-q': fe, 'ms-soft': 0 },
      finalAnswerCorrect: false,
      search: 'binary',
      cost: { rollouts: 0, tokens: 0 },
    });
    const s = summarizeSignals([rec([true, false, null], 1), rec([true, true], -1)], ['abs-q', 'ms-soft']);
    expect(s['abs-q']).toEqual({ positive: 3, labeled: 4, share: 0.75, withError: 1 });
    expect(s['ms-soft']).toEqual({ positive: 0, labeled: 5, share: 0, withError: 2 });
  });
});
