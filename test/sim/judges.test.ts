import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  parseCriticAnswer,
  parseJudgeVerdict,
  parseOrmVerdict,
  renderCriticMessages,
  renderJudgeMessages,
  renderOrmMessages,
  renderQwenPrmInput,
} from '../../src/prompts/index.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  createSimModel,
  DEFAULT_SIM_OPTIONS,
  exactStepValues,
  expectedProcessBenchScores,
  firstWrongStep,
  generateSimProblems,
  isSimSolutionCorrect,
  parseSimQuestion,
  sampleSimSolution,
  simChunkDifficulties,
  simJudgeRates,
  simProcessBenchRows,
  wrongChunks,
} from '../../src/sim/index.js';
import { sharedData } from '../support/shared-data.js';

/** Chunks of many sampled solutions, each with its truth (wrong or not). */
function labelledChunks(count: number, seed: number) {
  const out: Array<{ question: string; history: string[]; chunk: string; wrong: boolean }> = [];
  generateSimProblems({ count, seed }).forEach((p, i) => {
    const sol = sampleSimSolution(p, DEFAULT_SIM_OPTIONS, seed * 1000 + i);
    wrongChunks(p, sol).forEach((wrong, j) => {
      out.push({ question: p.question, history: sol.slice(0, j), chunk: sol[j], wrong });
    });
  });
  return out;
}

describe('simulated generative judge', () => {
  const items = labelledChunks(150, 1);

  it('has the configured sensitivity and specificity, and format-failure rate (judge_difficulty=0)', async () => {
    const model = createSimModel(
      'sim?sensitivity=0.8&specificity=0.7&format_failure=0.1&judge_difficulty=0&seed=9',
      PROMPT_READERS,
    );
    const tally = { wrongNeg: 0, wrong: 0, rightPos: 0, right: 0, failed: 0, total: 0 };
    for (const it of items) {
      const r = await model.generate({
        messages: renderJudgeMessages({ problem: it.question, history: it.history, chunk: it.chunk }),
        n: 16,
      });
      for (const s of r.samples) {
        tally.total++;
        const v = parseJudgeVerdict(s.text);
        if (v === null) {
          tally.failed++;
          continue;
        }
        if (it.wrong) {
          tally.wrong++;
          if (v === 'Negative') tally.wrongNeg++;
        } else {
          tally.right++;
          if (v === 'Positive') tally.rightPos++;
        }
      }
    }
    expect(tally.wrong).toBeGreaterThan(1500);
    const sens = tally.wrongNeg / tally.wrong;
    const spec = tally.rightPos / tally.right;
    const fail = tally.failed / tally.total;
    // 4 standard errors of each rate.
    expect(Math.abs(sens - 0.8)).toBeLessThan(4 * Math.sqrt((0.8 * 0.2) / tally.wrong));
    expect(Math.abs(spec - 0.7)).toBeLessThan(4 * Math.sqrt((0.7 * 0.3) / tally.right));
    expect(Math.abs(fail - 0.1)).toBeLessThan(4 * Math.sqrt((0.1 * 0.9) / tally.total));
  });

  it('by default its errors grow with step difficulty: it misses more on hard steps, and more than its base rate on wrong chunks', async () => {
    const model = createSimModel('sim?seed=9', PROMPT_READERS);
    // Chunks split at the median step difficulty; the rates the judge should have on each.
    const withDifficulty = items.map((it) => {
      const p = parseSimQuestion(it.question)!;
      const d = simChunkDifficulties(p, [...it.history, it.chunk], DEFAULT_SIM_OPTIONS).at(-1)!;
      return { ...it, difficulty: d.difficulty };
    });
    const sorted = withDifficulty.map((x) => x.difficulty).sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const tally = {
      easy: { n: 0, miss: 0, expected: 0 },
      hard: { n: 0, miss: 0, expected: 0 },
      right: { n: 0, neg: 0, expected: 0 },
    };
    for (const it of withDifficulty) {
      const r = await model.generate({
        messages: renderJudgeMessages({ problem: it.question, history: it.history, chunk: it.chunk }),
        n: 16,
      });
      const rates = simJudgeRates(it.difficulty, DEFAULT_SIM_OPTIONS);
      for (const s of r.samples) {
        const v = parseJudgeVerdict(s.text);
        if (it.wrong) {
          const t = it.difficulty > median ? tally.hard : tally.easy;
          t.n++;
          t.expected += 1 - rates.sensitivity;
          if (v === 'Positive') t.miss++;
        } else {
          tally.right.n++;
          tally.right.expected += 1 - rates.specificity;
          if (v === 'Negative') tally.right.neg++;
        }
      }
    }
    for (const t of [tally.easy, tally.hard]) {
      expect(t.n).toBeGreaterThan(300);
      const e = t.expected / t.n;
      expect(Math.abs(t.miss / t.n - e)).toBeLessThan(4 * Math.sqrt((e * (1 - e)) / t.n));
    }
    const missEasy = tally.easy.miss / tally.easy.n;
    const missHard = tally.hard.miss / tally.hard.n;
    expect(missHard).toBeGreaterThan(missEasy + 0.03);
    // Wrong chunks sit on hard steps more often, so the judge misses more than 1 − sensitivity on them.
    expect((tally.easy.miss + tally.hard.miss) / (tally.easy.n + tally.hard.n)).toBeGreaterThan(0.1);
    const fa = tally.right.expected / tally.right.n;
    expect(Math.abs(tally.right.neg / tally.right.n - fa)).toBeLessThan(
      4 * Math.sqrt((fa * (1 - fa)) / tally.right.n),
    );
  });

  it('a perfect judge rejects exactly the wrong chunks', async () => {
    const model = createSimModel('sim?judge=perfect', PROMPT_READERS);
    for (const it of items.slice(0, 400)) {
      const r = await model.generate({
        messages: renderJudgeMessages({ problem: it.question, history: it.history, chunk: it.chunk }),
        n: 2,
      });
      for (const s of r.samples) expect(parseJudgeVerdict(s.text)).toBe(it.wrong ? 'Negative' : 'Positive');
    }
  });

  it('early-exit first-error accuracy matches the exact formula within 3 F1 points', async () => {
    const rates = { sensitivity: 0.9, specificity: 0.9 };
    const rows = simProcessBenchRows({ count: 1000, errorShare: 0.5 }, { seed: 5 });
    const model = createSimModel({ ...rates, seed: 5 }, PROMPT_READERS);
    let errHit = 0;
    let errN = 0;
    let corHit = 0;
    let corN = 0;
    for (const row of rows) {
      let predicted = -1;
      for (let j = 0; j < row.steps.length; j++) {
        const r = await model.generate({
          messages: renderJudgeMessages({
            problem: row.problem,
            history: row.steps.slice(0, j),
            chunk: row.steps[j],
          }),
        });
        if (parseJudgeVerdict(r.samples[0].text) === 'Negative') {
          predicted = j;
          break;
        }
      }
      if (row.label >= 0) {
        errN++;
        if (predicted === row.label) errHit++;
      } else {
        corN++;
        if (predicted === -1) corHit++;
      }
    }
    const a = (100 * errHit) / errN;
    const c = (100 * corHit) / corN;
    const f1 = (2 * a * c) / (a + c);
    const expected = expectedProcessBenchScores(rows, rates);
    expect(errN).toBe(500);
    // The per-chunk rates grow with difficulty, so the constant-rate formula is off: the test can tell them apart.
    const constant = expectedProcessBenchScores(rows, { ...rates, judgeDifficulty: 0 });
    expect(Math.abs(expected.f1 - constant.f1)).toBeGreaterThan(2);
    expect(Math.abs(f1 - expected.f1)).toBeLessThan(3);
    expect(Math.abs(a - expected.error_acc)).toBeLessThan(4);
    expect(Math.abs(c - expected.correct_acc)).toBeLessThan(4);
  });
});

describe('simulated critic, PRM and outcome model', () => {
  it('critic: true first error with the configured accuracy, other answers in range', async () => {
    const rows = simProcessBenchRows({ count: 600, errorShare: 0.5 }, { seed: 2 });
    const model = createSimModel('sim?critic_acc=0.7&seed=2', PROMPT_READERS);
    let hits = 0;
    let total = 0;
    for (const row of rows) {
      const r = await model.generate({ messages: renderCriticMessages(row.problem, row.steps), n: 4 });
      for (const s of r.samples) {
        const idx = parseCriticAnswer(s.text)!;
        expect(idx).toBeGreaterThanOrEqual(-1);
        expect(idx).toBeLessThan(row.steps.length);
        total++;
        if (idx === row.label) hits++;
      }
    }
    expect(Math.abs(hits / total - 0.7)).toBeLessThan(4 * Math.sqrt((0.7 * 0.3) / total));
  });

  it('critic on a real (non-sim) problem answers a seeded guess and says so', async () => {
    const model = createSimModel('sim', PROMPT_READERS);
    const steps = ['Natalia sold 48 clips in April.', 'In May she sold half as many: 24.', 'Total 72.'];
    const req = {
      messages: renderCriticMessages('Natalia sold clips to 48 of her friends…', steps),
      seed: 3,
    };
    const a = await model.generate(req);
    expect(a.samples[0].text).toMatch(/seeded guess/);
    expect((await model.generate(req)).samples[0].text).toBe(a.samples[0].text);
    const idx = parseCriticAnswer(a.samples[0].text)!;
    expect(idx).toBeGreaterThanOrEqual(-1);
    expect(idx).toBeLessThan(3);
  });

  it('critic and judge over real ProcessBench problems answer labelled guesses', async () => {
    const rows = JSON.parse(readFileSync(sharedData('processbench/gsm8k.json'), 'utf8')) as Array<{
      problem: string;
      steps: string[];
    }>;
    const model = createSimModel('sim', PROMPT_READERS);
    for (const row of rows.slice(0, 30)) {
      const c = await model.generate({ messages: renderCriticMessages(row.problem, row.steps), seed: 1 });
      const idx = parseCriticAnswer(c.samples[0].text)!;
      expect(idx).toBeGreaterThanOrEqual(-1);
      expect(idx).toBeLessThan(row.steps.length);
      expect(c.samples[0].text).toMatch(/not from the simulated world/);
      const j = await model.generate({
        messages: renderJudgeMessages({
          problem: row.problem,
          history: row.steps.slice(0, 1),
          chunk: row.steps[1] ?? '',
        }),
      });
      expect(parseJudgeVerdict(j.samples[0].text)).not.toBeNull();
      expect(j.samples[0].text).toMatch(/seeded guess/);
    }
  });

  it('PRM: only prm=oracle gives the exact values; step scores follow the perceived chunk; a prefix keeps its scores', async () => {
    const [p] = generateSimProblems({ count: 1, seed: 8, minSteps: 8, maxSteps: 8 });
    let sol = sampleSimSolution(p, DEFAULT_SIM_OPTIONS, 1);
    for (let s = 2; firstWrongStep(p, sol) < 0; s++) sol = sampleSimSolution(p, DEFAULT_SIM_OPTIONS, s);
    const input = renderQwenPrmInput(p.question, sol);
    const exact = exactStepValues(p, sol).slice(1);
    const oracle = await createSimModel('sim?prm_noise=0&prm=oracle', PROMPT_READERS).pool!(input);
    oracle.data.forEach(([, pos], i) => {
      expect(pos).toBeCloseTo(Math.min(0.99, Math.max(0.01, exact[i])), 10);
    });
    // A PRM that perceives every chunk right (rates 1) gives 0.9 / 0.1 under prm=step.
    const s = await createSimModel('sim?prm_noise=0&prm=step&prm_sens=1&prm_spec=1', PROMPT_READERS).pool!(
      input,
    );
    const wrong = wrongChunks(p, sol);
    s.data.forEach(([, pos], i) => {
      expect(pos).toBeCloseTo(wrong[i] ? 0.1 : 0.9, 10);
    });
    // Causal: the scores of a prefix are the same whether or not later steps follow.
    const model = createSimModel('sim', PROMPT_READERS);
    const whole = (await model.pool!(input)).data;
    const head = (await model.pool!(renderQwenPrmInput(p.question, sol.slice(0, 4)))).data;
    expect(head).toEqual(whole.slice(0, 4));

    const noisy = createSimModel('sim?prm_noise=1&prm=step', PROMPT_READERS);
    let wrongMean = 0;
    let rightMean = 0;
    let nw = 0;
    let nr = 0;
    for (const it of labelledChunks(60, 4)) {
      const [[, pos]] = (
        await noisy.pool!(renderQwenPrmInput(it.question, [...it.history, it.chunk]))
      ).data.slice(-1);
      if (it.wrong) {
        wrongMean += pos;
        nw++;
      } else {
        rightMean += pos;
        nr++;
      }
    }
    expect(rightMean / nr - wrongMean / nw).toBeGreaterThan(0.4);
  });

  it('PRM (default): the final step follows the outcome model rates, so best-of-4 by it falls short of pass@4 (the oracle reaches it)', async () => {
    const problems = generateSimProblems({ count: 300, seed: 12 });
    const value = createSimModel('sim?orm_sens=0.8&orm_spec=0.85&judge_difficulty=0', PROMPT_READERS);
    const oracle = createSimModel('sim?prm=oracle', PROMPT_READERS);
    const t = { wrongLow: 0, wrong: 0, rightHigh: 0, right: 0 };
    let pass4 = 0;
    let best4 = 0;
    let best4Oracle = 0;
    for (const [i, p] of problems.entries()) {
      const sols = [0, 1, 2, 3].map((j) => sampleSimSolution(p, DEFAULT_SIM_OPTIONS, 4 * i + j));
      const right = sols.map((sol) => isSimSolutionCorrect(p, sol.join('\n\n')));
      const last = async (m: typeof value) =>
        Promise.all(
          sols.map(async (sol) => (await m.pool!(renderQwenPrmInput(p.question, sol))).data.at(-1)![1]),
        );
      const v = await last(value);
      const o = await last(oracle);
      v.forEach((score, j) => {
        if (right[j]) {
          t.right++;
          if (score > 0.5) t.rightHigh++;
        } else {
          t.wrong++;
          if (score < 0.5) t.wrongLow++;
        }
      });
      const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));
      if (right.some(Boolean)) pass4++;
      if (right[argmax(v)]) best4++;
      if (right[argmax(o)]) best4Oracle++;
    }
    // Outcome rates, within the noise of the score (prm_noise 1 flips ≈ 0 verdicts at 0.99 / 0.01).
    expect(Math.abs(t.wrongLow / t.wrong - 0.8)).toBeLessThan(4 * Math.sqrt((0.8 * 0.2) / t.wrong) + 0.01);
    expect(Math.abs(t.rightHigh / t.right - 0.85)).toBeLessThan(
      4 * Math.sqrt((0.85 * 0.15) / t.right) + 0.01,
    );
    expect(best4Oracle).toBe(pass4);
    expect(pass4 - best4).toBeGreaterThanOrEqual(0.03 * problems.length);
  });

  it('outcome model: configured rates on final-answer correctness', async () => {
    const model = createSimModel('sim?orm_sens=0.85&orm_spec=0.75&judge_difficulty=0&seed=1', PROMPT_READERS);
    const t = { wrongNo: 0, wrong: 0, rightYes: 0, right: 0 };
    for (const [i, p] of generateSimProblems({ count: 300, seed: 6 }).entries()) {
      const sol = sampleSimSolution(p, DEFAULT_SIM_OPTIONS, i).join('\n\n');
      const right = isSimSolutionCorrect(p, sol);
      const r = await model.generate({ messages: renderOrmMessages(p.question, sol), n: 10 });
      for (const s of r.samples) {
        const v = parseOrmVerdict(s.text);
        if (right) {
          t.right++;
          if (v === 'Correct') t.rightYes++;
        } else {
          t.wrong++;
          if (v === 'Incorrect') t.wrongNo++;
        }
      }
    }
    expect(Math.abs(t.wrongNo / t.wrong - 0.85)).toBeLessThan(4 * Math.sqrt((0.85 * 0.15) / t.wrong));
    expect(Math.abs(t.rightYes / t.right - 0.75)).toBeLessThan(4 * Math.sqrt((0.75 * 0.25) / t.right));
  });
});
