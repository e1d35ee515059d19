import { afterAll, describe, expect, it } from 'vitest';
import { labelByMutation } from '../../src/code/label.js';
import { generateMutants } from '../../src/code/mutate.js';
import { loadHumanEval, loadMbpp } from '../../src/data/index.js';
import { checkSolution } from '../../src/verify/check.js';
import { Sandbox } from '../../src/verify/code/sandbox.js';
import { checkCodeSolution, checkReferenceSolution } from '../../src/verify/code/tasks.js';
import { sharedData } from '../support/shared-data.js';

// Generous per-test limits: CI machines are loaded, and a reference solution must never time out here.
const sandbox = new Sandbox({ limits: { timeoutMs: 20_000, programTimeoutMs: 20_000 } });
afterAll(() => sandbox.close());

describe('reference solutions in the sandbox (real data)', () => {
  it('all 164 HumanEval canonical solutions pass their tests', { timeout: 180_000 }, async () => {
    const problems = (await loadHumanEval({ path: sharedData('humaneval/HumanEval.jsonl') })).records;
    expect(problems).toHaveLength(164);
    const checks = await Promise.all(problems.map((p) => checkReferenceSolution(p, { sandbox })));
    const failing = checks.flatMap((c, i) =>
      c.correct ? [] : [`${problems[i].id}: ${c.status} ${c.program.message ?? ''}`],
    );
    expect(failing).toEqual([]);
    // Decided outside the sandbox from plain values, except the tests that cannot be planned
    // (loops, random inputs, helpers computing the expected value): docs/code.md lists them.
    const oldWay = problems.filter((_, i) => checks[i].tests.some((t) => t.decidedBy === 'sandbox'));
    expect(oldWay.map((p) => p.id)).toEqual(
      [32, 33, 38, 44, 50, 52, 53, 129, 151].map((n) => `HumanEval/${n}`),
    );
  });

  // 974 runs, each its own bubblewrap sandbox: minutes on a loaded machine (over 300 s at load 30 on 2 cores).
  it('all 974 MBPP reference solutions pass theirs (test_setup_code included)', {
    timeout: 600_000,
  }, async () => {
    const problems = (await loadMbpp({ path: sharedData('mbpp/mbpp.jsonl') })).records;
    expect(problems).toHaveLength(974);
    const checks = await Promise.all(problems.map((p) => checkReferenceSolution(p, { sandbox })));
    const passed = checks.filter((c) => c.correct).length;
    expect(
      checks.flatMap((c, i) =>
        c.correct
          ? []
          : [
              `${problems[i].id}: ${c.status} ${c.tests.find((t) => t.status !== 'passed')?.message ?? c.program.message ?? ''}`,
            ],
      ),
    ).toEqual([]);
    expect(passed).toBe(974);
    const oldWay = checks.flatMap((c, i) =>
      c.tests.filter((t) => t.decidedBy === 'sandbox').map((t) => `${problems[i].id} ${t.name}`),
    );
    expect(oldWay).toEqual(['mbpp/596 assert 0', 'mbpp/596 assert 1', 'mbpp/596 assert 2']);
    // The problems with setup code only pass because it runs before the asserts.
    const withSetup = problems.filter((p) => String(p.meta?.test_setup_code ?? '').trim() !== '');
    expect(withSetup.length).toBeGreaterThan(0);
    for (const p of withSetup) expect(checks[problems.indexOf(p)].correct, p.id).toBe(true);
  });

  it('checks model answers through checkSolution: fenced, body-only, and wrong', {
    timeout: 120_000,
  }, async () => {
    const he = (await loadHumanEval({ path: sharedData('humaneval/HumanEval.jsonl'), limit: 3 })).records;
    const mbpp = (await loadMbpp({ path: sharedData('mbpp/mbpp.jsonl'), limit: 2 })).records;
    const body = he[2].meta?.canonical_solution as string;
    expect((await checkSolution(he[2], body)).correct).toBe(true);
    const wrong = await checkCodeSolution(he[2], '    return 0.0\n', { sandbox });
    expect(wrong.correct).toBe(false);
    expect(wrong.status).toBe('failed');
    const fenced = `Here is my solution:\n\`\`\`python\n${mbpp[1].meta?.code as string}\n\`\`\`\nIt uses sets.`;
    const ok = await checkSolution(mbpp[1], fenced);
    expect(ok).toEqual({ answer: String(mbpp[1].meta?.code).trimEnd(), correct: true });
    expect((await checkSolution(mbpp[1], 'I cannot solve this.')).correct).toBe(false);
  });
});

describe('mutation labels (real data, stratified subset of MBPP)', () => {
  it('finds a failing mutant for at least 90% of problems; every row has as many labels as steps', {
    timeout: 240_000,
  }, async () => {
    const all = (await loadMbpp({ path: sharedData('mbpp/mbpp.jsonl') })).records;
    // Every 16th problem: spans the whole id range (the full set is in bench/sandbox.ts and `stepwise label-code`).
    const problems = all.filter((_, i) => i % 16 === 0);
    const mutants = await generateMutants(problems.map((p) => ({ id: p.id, code: p.meta?.code as string })));
    const results = await Promise.all(
      problems.map((p) =>
        labelByMutation(p, mutants.get(p.id)?.mutants ?? [], {
          sandbox,
          mutantsPerProblem: 2,
          limits: { timeoutMs: 3000, programTimeoutMs: 10_000 },
        }),
      ),
    );
    const labeled = results.filter((r) => r.rows.some((row) => row.origin === 'mutant')).length;
    expect(labeled / problems.length).toBeGreaterThanOrEqual(0.9);
    const rows = results.flatMap((r) => r.rows);
    for (const row of rows) {
      expect(row.completions.length).toBe(row.labels.length);
      expect(row.chunks.length).toBe(row.labels.length);
      if (row.origin === 'mutant') {
        expect(row.labels.at(-1)).toBe(false);
        expect(row.labels.slice(0, -1).every(Boolean)).toBe(true);
        expect(row.status).not.toBe('passed');
      } else expect(row.labels.every(Boolean)).toBe(true);
    }
  });
});
