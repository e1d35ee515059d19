import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/rng.js';
import {
  exactStepValues,
  exactValue,
  generateSimProblems,
  parseSimQuestion,
  parseSimSpec,
  replaySimChunks,
  resolveSimOptions,
  type SimOptions,
  type SimProblem,
  sampleNextChunk,
  sampleSimChunks,
  sampleSimSolution,
  solveSimProblem,
  truthValues,
} from '../../src/sim/index.js';

/**
 * exactValue must describe the sampled process for every option setting, not just the
 * defaults: a wrong number may only become right through a catching check. (It used to be
 * possible for a second error to cancel the first, e.g. +10 then −10, so prefixes with exact
 * value 0 still succeeded under check_rate=0.)
 */

/** Did a continuation (or, for a finished prefix, the prefix itself) end with the gold answer? */
function succeeds(problem: SimProblem, prefix: readonly string[], rest: readonly string[]): boolean {
  const last = rest.length > 0 ? rest[rest.length - 1] : prefix[prefix.length - 1];
  return last?.includes(`\\boxed{${solveSimProblem(problem)}}`) ?? false;
}

/** Every prefix (including the empty and the full one) of a few solutions per problem, some with errors. */
function prefixesOf(problems: SimProblem[], o: SimOptions): Array<{ problem: SimProblem; chunks: string[] }> {
  const out: Array<{ problem: SimProblem; chunks: string[] }> = [];
  for (const [pi, problem] of problems.entries()) {
    const sol = sampleSimSolution(problem, o, 500 + pi);
    // A second solution that holds an error somewhere (if the policy makes one within a few tries).
    let withError = sol;
    for (let a = 1; a < 20 && !hasWrongNumber(problem, withError); a++)
      withError = sampleSimSolution(problem, o, 500 + pi + 1000 * a);
    for (const s of withError === sol ? [sol] : [sol, withError])
      for (let i = 0; i <= s.length; i++) out.push({ problem, chunks: s.slice(0, i) });
  }
  return out;
}

/** Whether the number held is wrong at some point of the solution. */
function hasWrongNumber(problem: SimProblem, chunks: readonly string[]): boolean {
  const truth = truthValues(problem);
  return chunks.some((_, i) => {
    const s = replaySimChunks(problem, chunks.slice(0, i + 1)).state;
    return s.value !== truth[s.k];
  });
}

const OPTION_SETS: Array<[string, SimOptions]> = [
  ['defaults', parseSimSpec('sim').options],
  ['no checks', parseSimSpec('sim?check_rate=0').options],
  ['no checks, step_error 0.3', parseSimSpec('sim?check_rate=0&step_error=0.3').options],
  [
    'step_error 0.3, many checks, false alarms, restatements',
    parseSimSpec('sim?step_error=0.3&check_rate=0.5&catch_rate=0.3&false_alarm=0.2&restate_rate=0.4').options,
  ],
  [
    'checks that never catch, frequent false alarms',
    parseSimSpec('sim?step_error=0.25&check_rate=1&catch_rate=0&false_alarm=0.5&difficulty_spread=0').options,
  ],
];

describe('exact values match the sampled process for every option setting', () => {
  it.each(OPTION_SETS)('Monte Carlo continuations agree with exactValue (%s)', (_name, o) => {
    const M = 400;
    const prefixes = prefixesOf(generateSimProblems({ count: 12, seed: 21 }), o);
    let inside = 0;
    let wrongHeld = 0;
    for (const [n, { problem, chunks }] of prefixes.entries()) {
      const q = exactValue(problem, chunks, o);
      const state = replaySimChunks(problem, chunks).state;
      if (state.phase === 'done' ? q === 0 : state.value !== truthValues(problem)[state.k]) wrongHeld++;
      const rng = createRng(`exact-mc:${n}`);
      let ok = 0;
      for (let j = 0; j < M; j++)
        if (succeeds(problem, chunks, sampleSimChunks(problem, o, state, rng))) ok++;
      // A value of 0 (or 1) is a certainty: not one continuation may succeed (fail).
      if (q === 0) expect(ok, `prefix ${n} has exact value 0`).toBe(0);
      if (q === 1) expect(ok, `prefix ${n} has exact value 1`).toBe(M);
      const se = Math.sqrt((q * (1 - q)) / M);
      if (Math.abs(ok / M - q) <= 4 * se + 1e-12) inside++;
    }
    expect(prefixes.length).toBeGreaterThanOrEqual(100);
    expect(wrongHeld).toBeGreaterThanOrEqual(20); // prefixes that already hold a wrong number
    expect(inside / prefixes.length).toBeGreaterThanOrEqual(0.99);
  });

  it('exactStepValues equals exactValue of each prefix', () => {
    const o = OPTION_SETS[2][1];
    for (const problem of generateSimProblems({ count: 5, seed: 4 })) {
      const sol = sampleSimSolution(problem, o, 9);
      const all = exactStepValues(problem, sol, o);
      expect(all).toEqual(
        sol.map((_, i) => exactValue(problem, sol.slice(0, i), o)).concat(exactValue(problem, sol, o)),
      );
    }
  });
});

describe('a wrong number becomes right only through a catching check', () => {
  const problem = parseSimQuestion(
    'Start with 10. Add 2, then add 3, then multiply by 2. What is the final number?',
  )!;
  // Errors as likely as possible: p_k = 0.95 for every operation.
  // No misconceptions: every error draws its offset, so all of them show up.
  const o = resolveSimOptions({
    stepError: 1,
    difficultySpread: 0,
    misconception: 0,
    checkRate: 0,
    restateRate: 0,
  });

  it('an error never cancels an earlier one (+10 is not undone by −10)', () => {
    const prefix = ['Step 1: add 2. 10 + 2 = 22.']; // off by +10
    const state = replaySimChunks(problem, prefix).state;
    const rng = createRng('cancel');
    const seen = new Set<number>();
    for (let j = 0; j < 2000; j++) {
      const next = sampleNextChunk(problem, o, state, rng)!;
      expect(next.state.value).not.toBe(truthValues(problem)[2]);
      seen.add(next.state.value - truthValues(problem)[2]);
    }
    // The would-be cancelling offset −10 is mirrored: deviation +20 appears, 0 never does.
    expect([...seen].sort((a, b) => a - b)).toEqual([8, 9, 10, 11, 12, 20]);
    expect(exactValue(problem, prefix, o)).toBe(0);
    for (let j = 0; j < 2000; j++)
      expect(succeeds(problem, prefix, sampleSimChunks(problem, o, state, rng))).toBe(false);
  });

  it('an error on a right number never produces the right number', () => {
    const state = replaySimChunks(problem, ['Step 1: add 2. 10 + 2 = 12.']).state;
    const rng = createRng('right');
    let errors = 0;
    for (let j = 0; j < 2000; j++) {
      const next = sampleNextChunk(problem, o, state, rng)!;
      if (next.state.value !== truthValues(problem)[2]) errors++;
    }
    // p = min(0.95, 1 × add weight 0.75) = 0.75: every error moves the number (mean 1500, sd ≈ 19).
    expect(errors).toBeGreaterThan(1420);
    expect(errors).toBeLessThan(1580);
  });

  it('multiply by 0 makes any number right, and the exact values account for it', () => {
    const zero = parseSimQuestion(
      'Start with 7. Add 3, then multiply by 0, then add 5. What is the final number?',
    )!;
    const oz = resolveSimOptions({ stepError: 0.3, difficultySpread: 0, checkRate: 0 });
    const wrong = ['Step 1: add 3. 7 + 3 = 11.'];
    const right = ['Step 1: add 3. 7 + 3 = 10.'];
    expect(exactValue(zero, wrong, oz)).toBeGreaterThan(0);
    expect(exactValue(zero, wrong, oz)).toBeCloseTo(exactValue(zero, right, oz), 12);
    const M = 4000;
    const rng = createRng('zero');
    const state = replaySimChunks(zero, wrong).state;
    let ok = 0;
    for (let j = 0; j < M; j++) if (succeeds(zero, wrong, sampleSimChunks(zero, oz, state, rng))) ok++;
    const q = exactValue(zero, wrong, oz);
    expect(Math.abs(ok / M - q)).toBeLessThanOrEqual(4 * Math.sqrt((q * (1 - q)) / M));
  });

  it('questions whose numbers could leave the safe-integer range are not sim questions', () => {
    // Beyond 2^53 an off-by-one result can round to the right number.
    expect(
      parseSimQuestion(
        'Start with 7. Multiply by 99999999, then multiply by 99999999, then add 1. What is the final number?',
      ),
    ).toBeNull();
    expect(
      parseSimQuestion('Start with 7. Multiply by 99999, then add 1. What is the final number?'),
    ).not.toBeNull();
  });
});
