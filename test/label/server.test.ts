import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, hashString } from '../../src/core/rng.js';
import { readLabelInput } from '../../src/label/input.js';
import { runLabelJob } from '../../src/label/job.js';
import type { LabeledSolutionRecord } from '../../src/label/label.js';
import { createPolicy } from '../../src/models/policy.js';
import { checkSolution } from '../../src/verify/check.js';
import { providers } from '../support/providers.js';
import { tempDir } from '../support/temp.js';
import { startScriptedServer } from './policy-server.js';

/**
 * Acceptance 3 and 4: rows {id, problem, answer, steps} labeled through the real `openai:`
 * backend against scripted servers on 127.0.0.1, counting requests at the server.
 */

let dir: string;
beforeAll(() => {
  dir = tempDir('stepwise-label-');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Row {
  id: string;
  problem: string;
  answer: string;
  steps: string[];
}

function gold(question: string): string {
  const m = /what is (\d+) \+ 1\?$/.exec(question);
  if (!m) throw new Error(`unexpected question ${question}`);
  return String(Number(m[1]) + 1);
}

function rowsFile(name: string, rows: Row[]): string {
  const file = join(dir, name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
  return file;
}

/** Solutions of 3–6 steps; the last one boxes the right answer unless a BAD step came before. */
function makeRows(count: number, badAt: (i: number) => number): Row[] {
  return Array.from({ length: count }, (_, i) => {
    const steps = Array.from({ length: 3 + (i % 4) }, (_, k) => `Step ${k + 1} of solution ${i}.`);
    const b = badAt(i);
    const bad = b >= 0 && b < steps.length;
    steps[steps.length - 1] += ` The answer is \\boxed{${bad ? -1 : i + 1}}.`;
    if (bad) steps[b] = `Step ${b + 1}: the BAD step of solution ${i}.`;
    return { id: `row-${i}`, problem: `Problem ${i}: what is ${i} + 1?`, answer: String(i + 1), steps };
  });
}

function records(file: string): LabeledSolutionRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/** Rollouts are right with probability 1/2 (hash of prefix, seed, index), always wrong after a BAD step. */
function halfRight(question: string, prefix: string, seed: number | undefined, index: number): string {
  const u = createRng(hashString(`${prefix}|${seed}|${index}`)).next();
  const right = !prefix.includes('BAD') && u < 0.5;
  return `Continuing.\n\nThe answer is \\boxed{${right ? gold(question) : '-1'}}.`;
}

describe('requests per prefix through the openai backend', () => {
  const rows = makeRows(6, (i) => (i % 2 === 0 ? 1 : -1));
  // Prefixes 0…H−1 of each solution (the whole solution is checked, not rolled out from).
  const prefixes = rows.reduce((a, r) => a + r.steps.length, 0);
  const M = 8;

  it('a server with n: exactly one completion request per prefix 0…H−1, n = M', async () => {
    const server = await startScriptedServer({ rollout: halfRight });
    try {
      const input = rowsFile('a3.jsonl', rows);
      const model = await providers.languageModel('openai:policy', {
        storePath: join(dir, 'a3.sqlite'),
        settings: { baseUrl: server.url },
      });
      const summary = await runLabelJob({
        solutions: readLabelInput(input),
        policy: createPolicy(model),
        checker: checkSolution,
        out: join(dir, 'a3.out.jsonl'),
        config: {
          rollouts: M,
          signals: ['abs-q', 'rel-ratio', 'rel-effective', 'ms-hard', 'ms-soft', 'sorm'],
          search: 'linear',
          seed: 1,
        },
      });
      await model.close?.();
      expect(server.requests).toHaveLength(prefixes);
      expect(server.requests.every((r) => r.n === M && r.outcome === 'ok')).toBe(true);
      // One request per distinct (problem, prefix).
      expect(new Set(server.requests.map((r) => `${r.question}|${r.prefix}`)).size).toBe(prefixes);
      expect(summary.rollouts).toBe(prefixes * M);
      expect(summary.spent.policy.calls).toBe(prefixes);
      const out = records(join(dir, 'a3.out.jsonl'));
      expect(out.map((r) => r.id)).toEqual(rows.map((r) => r.id));
      for (const r of out) {
        expect(r.chunks.map((c) => c.rollouts)).toEqual([...Array(r.chunks.length - 1).fill(M), 0]);
        expect(r.cost.rollouts).toBe(r.chunks.length * M);
        expect(r.chunks.at(-1)?.q).toBe(r.finalAnswerCorrect ? 1 : 0);
        expect(Object.keys(r.firstError).sort()).toEqual(
          ['abs-q', 'ms-hard', 'ms-soft', 'rel-effective', 'rel-ratio', 'sorm'].sort(),
        );
      }
    } finally {
      await server.close();
    }
  });

  it('a server that rejects n > 1: the backend falls back to M single requests per prefix by itself', async () => {
    const server = await startScriptedServer({ rollout: halfRight, nativeN: false });
    try {
      const input = rowsFile('a3b.jsonl', rows);
      const model = await providers.languageModel('openai:policy', {
        noCache: true,
        settings: { baseUrl: server.url },
      });
      const summary = await runLabelJob({
        solutions: readLabelInput(input),
        policy: createPolicy(model),
        checker: checkSolution,
        out: join(dir, 'a3b.out.jsonl'),
        config: { rollouts: M, signals: ['abs-q'], seed: 1, concurrency: 2 },
      });
      await model.close?.();
      const ok = server.answered();
      const rejected = server.requests.filter((r) => r.outcome === 'rejected');
      expect(ok).toHaveLength(prefixes * M);
      expect(ok.every((r) => r.n === 1)).toBe(true);
      // Only requests already in flight when the first rejection came back were rejected.
      expect(rejected.length).toBeGreaterThanOrEqual(1);
      expect(rejected.length).toBeLessThanOrEqual(8);
      // Each prefix got M distinct single requests (distinct seeds), none twice.
      expect(new Set(ok.map((r) => r.key)).size).toBe(ok.length);
      expect(summary.rollouts).toBe(prefixes * M);
      const out = records(join(dir, 'a3b.out.jsonl'));
      for (const r of out)
        expect(r.firstError['abs-q']).toBe(
          r.id.endsWith('0') || r.id.endsWith('2') || r.id.endsWith('4') ? 1 : -1,
        );
    } finally {
      await server.close();
    }
  });
});

describe('first error under abs-q with a server that fails every rollout after a given step', () => {
  it('12 solutions of H chunks: at most ΣH requests (prefixes 0…H−1) and the first errors are the BAD steps', async () => {
    // Rollouts are always right unless the prefix contains the BAD step.
    const server = await startScriptedServer({
      rollout: (q, prefix) => `Done.\n\nThe answer is \\boxed{${prefix.includes('BAD') ? '-1' : gold(q)}}.`,
    });
    try {
      const rows = makeRows(12, (i) => (i % 3 === 2 ? -1 : i % 5));
      const sumH = rows.reduce((a, r) => a + r.steps.length, 0);
      const expected = rows.map((r) => r.steps.findIndex((s) => s.includes('BAD')));
      expect(expected.filter((e) => e === -1).length).toBeGreaterThanOrEqual(3);
      expect(new Set(expected.filter((e) => e >= 0)).size).toBeGreaterThanOrEqual(3);
      const model = await providers.languageModel('openai:policy', {
        noCache: true,
        settings: { baseUrl: server.url },
      });
      const out = join(dir, 'a4.out.jsonl');
      await runLabelJob({
        solutions: readLabelInput(rowsFile('a4.jsonl', rows)),
        policy: createPolicy(model),
        checker: checkSolution,
        out,
        config: { rollouts: 4, signals: ['abs-q', 'rel-ratio', 'sorm'], seed: 3 },
      });
      await model.close?.();
      // One request per prefix 0…H−1 at most (none from a finished solution).
      expect(server.requests.length).toBeLessThanOrEqual(sumH);
      expect(server.requests.some((r) => r.prefix.includes('boxed'))).toBe(false);
      const got = records(out);
      expect(got.map((r) => r.firstError['abs-q'])).toEqual(expected);
      // With all-or-nothing rollouts the other signals agree.
      expect(got.map((r) => r.firstError['rel-ratio'])).toEqual(expected);
      expect(got.map((r) => r.firstError.sorm)).toEqual(expected);
      for (const r of got) {
        expect(r.q0).toBe(1);
        const fe = r.firstError['abs-q']!;
        r.chunks.forEach((c, k) => {
          expect(c.q).toBe(fe >= 0 && k >= fe ? 0 : 1);
        });
      }
      // Binary search agrees here (Q̂ is monotone) with fewer requests.
      const before = server.requests.length;
      const model2 = await providers.languageModel('openai:policy', {
        noCache: true,
        settings: { baseUrl: server.url },
      });
      const outB = join(dir, 'a4b.out.jsonl');
      await runLabelJob({
        solutions: readLabelInput(rowsFile('a4.jsonl', rows)),
        policy: createPolicy(model2),
        checker: checkSolution,
        out: outB,
        config: { rollouts: 4, signals: ['abs-q'], search: 'binary', seed: 3 },
      });
      await model2.close?.();
      expect(records(outB).map((r) => r.firstError['abs-q'])).toEqual(expected);
      expect(server.requests.length - before).toBeLessThan(before);
    } finally {
      await server.close();
    }
  });
});
