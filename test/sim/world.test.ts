import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/rng.js';
import {
  DEFAULT_SIM_OPTIONS,
  exactStepValues,
  exactValue,
  firstWrongStep,
  generateSimProblems,
  parseSimQuestion,
  renderSimQuestion,
  replaySimChunks,
  resolveSimOptions,
  sampleNextChunk,
  sampleSimChunks,
  sampleSimSolution,
  simSteps,
  simSuccessRate,
  simValueTable,
  solveSimProblem,
  stepErrorProbabilities,
  truthValues,
  wrongChunks,
} from '../../src/sim/index.js';

const O = DEFAULT_SIM_OPTIONS;

describe('sim problems', () => {
  it('question text round-trips and the gold answer follows the operations', () => {
    const q = renderSimQuestion(7, [
      { kind: 'add', operand: 5 },
      { kind: 'multiply', operand: 3 },
      { kind: 'subtract', operand: 4 },
    ]);
    expect(q).toBe('Start with 7. Add 5, then multiply by 3, then subtract 4. What is the final number?');
    const p = parseSimQuestion(q);
    expect(p).not.toBeNull();
    expect(solveSimProblem(p!)).toBe(32);
    expect(parseSimQuestion('What is 2 + 2?')).toBeNull();
  });

  it('the same seed gives the same problems, step counts within the range', () => {
    const a = generateSimProblems({ count: 50, seed: 3, minSteps: 4, maxSteps: 6 });
    const b = generateSimProblems({ count: 50, seed: 3, minSteps: 4, maxSteps: 6 });
    expect(a).toEqual(b);
    expect(generateSimProblems({ count: 50, seed: 4 })).not.toEqual(a);
    for (const p of a) {
      expect(p.ops.length).toBeGreaterThanOrEqual(4);
      expect(p.ops.length).toBeLessThanOrEqual(6);
      expect(parseSimQuestion(p.question)).toEqual(p);
    }
  });

  it('mean per-step error is about step_error, and difficulty varies success rates', () => {
    const ps = generateSimProblems({ count: 2000, seed: 1 });
    const all = ps.flatMap((p) => stepErrorProbabilities(p, O));
    const mean = all.reduce((s, x) => s + x, 0) / all.length;
    expect(mean).toBeGreaterThan(0.085);
    expect(mean).toBeLessThan(0.115);
    const rates = ps.slice(0, 200).map((p) => simSuccessRate(p, O));
    expect(Math.min(...rates)).toBeLessThan(0.3);
    expect(Math.max(...rates)).toBeGreaterThan(0.9);
  });
});

describe('misconceptions: errors recur within a problem', () => {
  const problems = generateSimProblems({ count: 400, seed: 2 });

  it('a trap step is wrong on about `recur` of its resamples, always to the same number; other steps slip independently', () => {
    const steps = problems.flatMap((p) => simSteps(p, O).map((s, k) => ({ p, s, k })));
    const traps = steps.filter((x) => x.s.trap);
    // About misconception × rate / recur of the steps are traps (≈ 0.5 × 0.1 / 0.7 ≈ 7%).
    expect(traps.length / steps.length).toBeGreaterThan(0.04);
    expect(traps.length / steps.length).toBeLessThan(0.11);
    const rng = createRng('resample');
    for (const { p, k, s } of [...traps.slice(0, 20), ...steps.filter((x) => !x.s.trap).slice(0, 20)]) {
      // The state right before operation k with the right number (a restatement already written).
      const truth = truthValues(p);
      const state = { k, value: truth[k], phase: 'restated' as const };
      const wrongValues = new Set<number>();
      let wrong = 0;
      const M = 400;
      for (let j = 0; j < M; j++) {
        const next = sampleNextChunk(p, O, state, rng)!;
        if (next.state.value !== truth[k + 1]) {
          wrong++;
          wrongValues.add(next.state.value);
        }
      }
      const q = s.errorProbability;
      expect(Math.abs(wrong / M - q)).toBeLessThanOrEqual(4 * Math.sqrt((q * (1 - q)) / M) + 1e-9);
      if (s.trap) {
        expect(q).toBe(O.recur);
        expect(wrongValues.size).toBe(1);
      } else {
        expect(q).toBeLessThan(s.rate);
        if (wrong > 20) expect(wrongValues.size).toBeGreaterThan(2);
      }
    }
  });

  it('errors correlate: a step wrong in one solution is wrong in another of the same problem far more often than on average', () => {
    let both = 0;
    let first = 0;
    let second = 0;
    let pairs = 0;
    problems.forEach((p, i) => {
      const ea = firstWrongStep(p, sampleSimSolution(p, O, 10_000 + i)) >= 0;
      const eb = firstWrongStep(p, sampleSimSolution(p, O, 20_000 + i)) >= 0;
      pairs++;
      if (ea) first++;
      if (eb) second++;
      if (ea && eb) both++;
    });
    // P(second has an error | first has one) is well above P(second has an error).
    expect(both / first).toBeGreaterThan(second / pairs + 0.1);
  });

  it('without misconceptions the error probability of every step is its rate', () => {
    const o = resolveSimOptions({ misconception: 0 });
    for (const p of problems.slice(0, 50))
      for (const s of simSteps(p, o)) {
        expect(s.trap).toBe(false);
        expect(s.errorProbability).toBeCloseTo(s.rate, 12);
      }
  });
});

describe('exact values', () => {
  const p = parseSimQuestion('Start with 10. Add 2, then multiply by 3. What is the final number?')!;

  it('match a hand-computed value table', () => {
    const o = resolveSimOptions({
      stepError: 0.1,
      difficultySpread: 0,
      misconception: 0,
      checkRate: 0.5,
      catchRate: 0.4,
      falseAlarm: 0,
    });
    const [p0, p1] = stepErrorProbabilities(p, o);
    expect(p0).toBeCloseTo(0.075, 12); // 0.1 × add weight 0.75
    expect(p1).toBeCloseTo(0.125, 12); // 0.1 × multiply weight 1.25
    // R(2,·) = (1, 0); C(2,0) = 1; C(2,1) = 0.5·0.4 = 0.2
    // R(1,0) = 0.875·1 + 0.125·0.2 = 0.9; R(1,1) = 0.2
    // C(1,0) = 0.9; C(1,1) = 0.5·(0.4·0.9 + 0.6·0.2) + 0.5·0.2 = 0.34
    // R(0,0) = 0.925·0.9 + 0.075·0.34 = 0.858
    const t = simValueTable(p, o);
    expect(t.ready[0][0]).toBeCloseTo(0.858, 12);
    expect(t.afterOp[1][1]).toBeCloseTo(0.34, 12);
    expect(exactValue(p, [], o)).toBeCloseTo(0.858, 12);
    expect(exactValue(p, ['Step 1: add 2. 10 + 2 = 13.'], o)).toBeCloseTo(0.34, 12);
    expect(exactValue(p, ['Step 1: add 2. 10 + 2 = 12.'], o)).toBeCloseTo(0.9, 12);
    // A restatement changes nothing; a check that catches restores the value.
    expect(exactValue(p, ['We start with 10.'], o)).toBeCloseTo(0.858, 12);
    const caught = [
      'Step 1: add 2. 10 + 2 = 13.',
      'Check: redoing the calculation from 10 gives 12, not 13, so the number is 12.',
    ];
    expect(exactValue(p, caught, o)).toBeCloseTo(0.9, 12);
    expect(
      exactValue(
        p,
        [...caught, 'Step 2: multiply by 3. 12 × 3 = 36.', 'The final number is \\boxed{36}.'],
        o,
      ),
    ).toBe(1);
    expect(exactValue(p, ['The final number is \\boxed{35}.'], o)).toBe(0);
  });

  it('first wrong step and per-chunk errors follow the documented definition', () => {
    const chunks = [
      'We start with 10.',
      'Step 1: add 2. 10 + 2 = 13.', // wrong: introduces the error
      'Check: the steps so far look right, so the number is 13.', // missed: not a new error
      'Step 2: multiply by 3. 13 × 3 = 39.', // right given the previous number
      'The final number is \\boxed{39}.',
    ];
    expect(wrongChunks(p, chunks)).toEqual([false, true, false, false, false]);
    expect(firstWrongStep(p, chunks)).toBe(1);
    expect(firstWrongStep(p.question, ['So far, the number is 11.'])).toBe(0);
    expect(firstWrongStep(p, ['Let me think.', 'Step 1: add 2. 10 + 2 = 12.'])).toBe(-1);
  });

  it.each([
    ['default options', O],
    [
      'frequent checks, false alarms, restatements',
      resolveSimOptions({
        stepError: 0.2,
        checkRate: 0.5,
        catchRate: 0.6,
        falseAlarm: 0.2,
        restateRate: 0.4,
      }),
    ],
  ])('exact step values agree with Monte Carlo continuations in process (%s)', (_name, o) => {
    const problems = generateSimProblems({ count: 5, seed: 11 });
    let checked = 0;
    for (const [pi, prob] of problems.entries()) {
      const sol = sampleSimSolution(prob, o, 100 + pi);
      const values = exactStepValues(prob, sol, o);
      for (let i = 0; i <= sol.length; i += 2) {
        const M = 2500;
        const rng = createRng(`mc:${pi}:${i}`);
        const state = replaySimChunks(prob, sol.slice(0, i)).state;
        let ok = 0;
        for (let j = 0; j < M; j++) {
          const rest = sampleSimChunks(prob, o, state, rng);
          const last = rest.length > 0 ? rest[rest.length - 1] : sol[i - 1];
          if (last.includes(`\\boxed{${solveSimProblem(prob)}}`)) ok++;
        }
        const q = values[i];
        const se = Math.sqrt(Math.max(q * (1 - q), 1e-9) / M);
        expect(Math.abs(ok / M - q)).toBeLessThanOrEqual(4 * se + 1e-9);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(12);
  });
});
