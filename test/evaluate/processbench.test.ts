import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessBenchRecord } from '../../src/data/types.js';
import {
  loadProcessBenchSamples,
  runProcessBench,
  scoreJson,
  scorePredictions,
  spreadSample,
} from '../../src/evaluate/processbench.js';
import { formatProcessBenchReport } from '../../src/evaluate/table.js';
import { createJudge } from '../../src/judge/create.js';
import type { StepJudge } from '../../src/judge/types.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { createSimModel } from '../../src/sim/model.js';
import { providers } from '../support/providers.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

let dir: string;
let dataset: ProcessBenchRecord[];
const root = new URL('../..', import.meta.url).pathname;

beforeAll(async () => {
  dir = tempDir('stepwise-pb-');
  dataset = await loadProcessBenchSamples({ path: sharedData('processbench') });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writePredictions(name: string, rows: Array<{ id: string; prediction: number | null }>): string {
  const file = join(dir, name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
  return file;
}

/** The official script, written out plainly: numpy-style means per class, F1, mean over subsets. */
function official(rows: Array<{ subset: string; label: number; prediction: number | null }>) {
  const subsets: Record<string, { error_acc: number; correct_acc: number; f1: number; n: number }> = {};
  const names = [...new Set(rows.map((r) => r.subset))];
  const f1s: number[] = [];
  for (const name of names) {
    const res = rows.filter((r) => r.subset === name);
    const data1 = res.filter((e) => e.label !== -1);
    const data2 = res.filter((e) => e.label === -1);
    const acc1 = (data1.filter((e) => e.prediction === e.label).length / data1.length) * 100;
    const acc2 = (data2.filter((e) => e.prediction === e.label).length / data2.length) * 100;
    const f1 = (2 * acc1 * acc2) / (acc1 + acc2);
    subsets[name] = { error_acc: acc1, correct_acc: acc2, f1, n: res.length };
    f1s.push(f1);
  }
  return { subsets, average_f1: f1s.reduce((a, b) => a + b, 0) / f1s.length };
}

describe('--predictions scoring (acceptance 1)', () => {
  it('holds all 3,400 real samples in four subsets', () => {
    expect(dataset).toHaveLength(3400);
    expect(
      Object.fromEntries(
        ['gsm8k', 'math', 'olympiadbench', 'omnimath'].map((s) => [
          s,
          dataset.filter((r) => r.subset === s).length,
        ]),
      ),
    ).toEqual({
      gsm8k: 400,
      math: 1000,
      olympiadbench: 1000,
      omnimath: 1000,
    });
  });

  it('the true labels give F1 = 100 on every subset', () => {
    const file = writePredictions(
      'truth.jsonl',
      dataset.map((r) => ({ id: r.id, prediction: r.label })),
    );
    const s = scoreJson(scorePredictions(file, dataset));
    for (const m of Object.values(s.subsets))
      expect(m).toMatchObject({ error_acc: 100, correct_acc: 100, f1: 100 });
    expect(Object.keys(s.subsets)).toEqual(['gsm8k', 'math', 'olympiadbench', 'omnimath']);
    expect(s.average_f1).toBe(100);
  });

  it('all −1 gives error_acc 0, correct_acc 100, F1 0', () => {
    const file = writePredictions(
      'none.jsonl',
      dataset.map((r) => ({ id: r.id, prediction: -1 })),
    );
    const s = scoreJson(scorePredictions(file, dataset));
    for (const m of Object.values(s.subsets))
      expect(m).toMatchObject({ error_acc: 0, correct_acc: 100, f1: 0 });
    expect(s.average_f1).toBe(0);
  });

  it('any predictions file: every number equals the official formula to 1e-6', () => {
    const labels = dataset.map((r) => ({
      id: r.id,
      subset: r.subset,
      label: r.label,
      steps: r.steps.length,
    }));
    let k = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seed, pTrue) => {
          // Predictions: the truth with probability pTrue, else a random index in [−1, steps) or null.
          let state = seed || 1;
          const rand = () => {
            state = (Math.imul(state, 1103515245) + 12345) >>> 0;
            return state / 2 ** 32;
          };
          const rows = labels.map((r) => {
            const u = rand();
            const prediction =
              u < pTrue ? r.label : u > 0.995 ? null : Math.floor(rand() * (r.steps + 1)) - 1;
            return { ...r, prediction };
          });
          const file = writePredictions(
            `random-${k++}.jsonl`,
            rows.map(({ id, prediction }) => ({ id, prediction })),
          );
          const ours = scoreJson(scorePredictions(file, dataset));
          const ref = official(rows);
          for (const [name, m] of Object.entries(ref.subsets)) {
            const o = ours.subsets[name];
            expect(o.n).toBe(m.n);
            for (const key of ['error_acc', 'correct_acc', 'f1'] as const) {
              if (Number.isNaN(m[key])) expect(o[key]).toBe(0);
              else expect(Math.abs((o[key] as number) - m[key])).toBeLessThan(1e-6);
            }
          }
          if (!Number.isNaN(ref.average_f1))
            expect(Math.abs(ours.average_f1! - ref.average_f1)).toBeLessThan(1e-6);
        },
      ),
      { numRuns: 12, seed: 42 },
    );
  });

  it('a partial file scores only its lines; bad lines name file, line and field', () => {
    const gsm = dataset.filter((r) => r.subset === 'gsm8k').slice(0, 10);
    const partial = scorePredictions(
      writePredictions(
        'partial.jsonl',
        gsm.map((r) => ({ id: r.id, prediction: r.label })),
      ),
      dataset,
    );
    expect(Object.keys(partial.subsets)).toEqual(['gsm8k']);
    expect(partial.subsets.gsm8k.n).toBe(10);
    expect(partial.missing).toEqual({ gsm8k: 390 });
    const bad = (rows: string, re: RegExp) => {
      const f = join(dir, 'bad.jsonl');
      writeFileSync(f, rows);
      expect(() => scorePredictions(f, dataset)).toThrow(re);
    };
    bad(
      '{"id":"gsm8k-0","prediction":1}\n{"id":"nope-3","prediction":1}',
      /bad\.jsonl, line 2, field "id": unknown ProcessBench id/,
    );
    bad('{"id":"gsm8k-0","prediction":1.5}', /line 1, field "prediction"/);
    bad('{"id":"gsm8k-0","prediction":1}\n{"id":"gsm8k-0","prediction":2}', /appears twice/);
    bad('not json', /line 1: not valid JSON/);
  });
});

describe('ProcessBench runs', () => {
  it('the in-process sim critic runs over all 3,400 real problems and the report says it is simulated (acceptance 5)', async () => {
    const judge = await createJudge('critic:sim', { providers, seed: 0 });
    const predictions = join(dir, 'critic.predictions.jsonl');
    const report = await runProcessBench({ judge, samples: dataset, predictionsPath: predictions, seed: 0 });
    expect(report.samples).toBe(3400);
    expect(report.simulated).toBe(true);
    expect(report.notice).toMatch(/SIMULATED/);
    expect(report.threshold.mode).toBe('verdict');
    const lines = readFileSync(predictions, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3400);
    expect(JSON.parse(lines[0]).id).toBe(dataset[0].id);
    // The predictions file re-scores to exactly the report.
    const again = scoreJson(scorePredictions(predictions, dataset));
    expect(again.subsets).toEqual(scoreJson(report).subsets);
    expect(report.cost.judge.calls).toBe(3400);
    expect(report.cost.judge.samples).toBe(3400 * 8);
    expect(formatProcessBenchReport(report)).toMatch(/SIMULATED — not a real model/);
  });

  it('resumes: a second run judges nothing again; another judge is refused', async () => {
    const samples = spreadSample(
      dataset.filter((r) => r.subset === 'gsm8k'),
      30,
    );
    expect(samples.some((s) => s.label === -1) && samples.some((s) => s.label !== -1)).toBe(true);
    let calls = 0;
    const inner = await createJudge('generative:sim?sensitivity=0.9', { providers });
    const counting: StepJudge = {
      ...inner,
      judge: async (p, c, o) => {
        calls++;
        return inner.judge(p, c, o);
      },
    };
    const path = join(dir, 'resume.predictions.jsonl');
    const first = await runProcessBench({
      judge: counting,
      samples: samples.slice(0, 12),
      predictionsPath: path,
    });
    expect(calls).toBe(12);
    const second = await runProcessBench({ judge: counting, samples, predictionsPath: path });
    expect(calls).toBe(30);
    expect(second.samples).toBe(30);
    expect(first.subsets.gsm8k.n).toBe(12);
    const other = await createJudge('critic:sim', { providers });
    await expect(runProcessBench({ judge: other, samples, predictionsPath: path })).rejects.toThrow(
      /another run/,
    );
  });

  it('threshold auto: a scalar judge is tuned on gsm8k and scored with every chunk', async () => {
    const judge = await createJudge('prm:sim?prm=step&prm_noise=0.5', { providers });
    const samples = [
      ...spreadSample(
        dataset.filter((r) => r.subset === 'gsm8k'),
        40,
      ),
      ...spreadSample(
        dataset.filter((r) => r.subset === 'math'),
        20,
      ),
    ];
    const report = await runProcessBench({
      judge,
      samples,
      predictionsPath: join(dir, 'prm.predictions.jsonl'),
    });
    expect(report.threshold.mode).toBe('auto');
    expect(report.threshold.chosenOn).toBe('gsm8k');
    expect(report.threshold.value).not.toBeNull();
    // The chosen threshold is the best on gsm8k: no fixed threshold does better there.
    for (const t of [0.1, 0.3, 0.5, 0.7, 0.9]) {
      const fixed = await runProcessBench({
        judge,
        samples,
        predictionsPath: join(dir, `prm-${t}.predictions.jsonl`),
        threshold: { mode: 'fixed', value: t },
      });
      expect(fixed.subsets.gsm8k.f1!).toBeLessThanOrEqual(report.subsets.gsm8k.f1! + 1e-9);
    }
    await expect(
      runProcessBench({ judge, samples: samples.slice(40), predictionsPath: join(dir, 'x.jsonl') }),
    ).rejects.toThrow(/gsm8k subset, which this run does not include/);
  });

  it('spreadSample keeps file order and spreads evenly', () => {
    expect(spreadSample([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([0, 3, 6]);
    expect(spreadSample([1, 2], 5)).toEqual([1, 2]);
  });

  it('the simulated model is named as such', () => {
    expect(createSimModel('sim', PROMPT_READERS).provider).toBe('sim');
  });
});

describe('CLI', () => {
  const bin = join(root, 'bin/stepwise.js');
  const built = existsSync(join(root, 'dist/cli/main.js'));

  it('eval processbench with the sim critic over ../shared/data/processbench writes the report and predictions', () => {
    expect(built, 'run `npm run build` first: the CLI runs from dist/').toBe(true);
    const out = join(dir, 'cli', 'report.json');
    const env = { ...process.env, STEPWISE_HOME: join(dir, 'home'), STEPWISE_QUIET: '1' };
    const args = [
      bin,
      'eval',
      'processbench',
      '--judge',
      'critic:sim',
      '--path',
      sharedData('processbench'),
      '--out',
      out,
    ];
    // The simulated judge knows only the simulated world: on the real ProcessBench it refuses…
    const refused = spawnSync(process.execPath, args, { env, encoding: 'utf8', cwd: root });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/simulated world's problems \(the sim dataset/);
    expect(existsSync(out)).toBe(false);
    // …unless asked to guess, and then every number says it is simulated.
    const guessed = spawnSync(process.execPath, [...args, '--sim-guess'], {
      env,
      encoding: 'utf8',
      cwd: root,
    });
    expect(guessed.status, guessed.stderr).toBe(0);
    // The report goes to stderr; stdout is for --json.
    expect(guessed.stdout).toBe('');
    const table = guessed.stderr;
    expect(table).toMatch(/SIMULATED/);
    expect(table).toMatch(/Math-Shepherd-PRM-7B\s+31\.5/);
    // A simulated run is never ranked among the published (real-model) results.
    expect(table).not.toMatch(/→ this run/);
    expect(table).toMatch(/SIMULATED run: average F1 .* not ranked/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.samples).toBe(3400);
    expect(report.simulated).toBe(true);
    expect(report.notice).toMatch(/not from any real model/);
    const predictions = join(dir, 'cli', 'report.predictions.jsonl');
    expect(readFileSync(predictions, 'utf8').trim().split('\n')).toHaveLength(3400);
    // --predictions --json prints exactly {subsets: {name: {error_acc, correct_acc, f1, n}}, average_f1}.
    const scored = JSON.parse(
      execFileSync(
        process.execPath,
        [
          bin,
          'eval',
          'processbench',
          '--predictions',
          predictions,
          '--path',
          sharedData('processbench'),
          '--json',
        ],
        {
          env,
          encoding: 'utf8',
          cwd: root,
        },
      ),
    );
    expect(Object.keys(scored)).toEqual(['subsets', 'average_f1']);
    expect(Object.keys(scored.subsets.gsm8k)).toEqual(['error_acc', 'correct_acc', 'f1', 'n']);
    expect(scored.subsets).toEqual(report.subsets);
    expect(scored.average_f1).toBe(report.average_f1);
    // The run is recorded in the store.
    const runs = execFileSync(process.execPath, [bin, 'runs', '--json'], {
      env,
      encoding: 'utf8',
      cwd: root,
    });
    expect(runs).toMatch(/"command":"eval processbench","config":\{"judge":"critic:sim"/);
  });

  it('user errors print a message, not a stack trace', () => {
    const r = spawnSync(
      process.execPath,
      [bin, 'eval', 'processbench', '--judge', 'magic:x', '--out', join(dir, 'y.json')],
      {
        encoding: 'utf8',
        env: { ...process.env, STEPWISE_HOME: join(dir, 'home') },
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown kind "magic"/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

describe('--limit keeps both classes', () => {
  it('stratifiedSample keeps each class in its share even when a file alternates them', async () => {
    const { stratifiedSample } = await import('../../src/evaluate/processbench.js');
    const rows = Array.from({ length: 200 }, (_, i) => ({
      id: `s${i}`,
      generator: 'g',
      problem: 'p',
      steps: ['a', 'b'],
      final_answer_correct: i % 2 === 1,
      label: i % 2 === 0 ? 1 : -1,
      subset: 'sim',
    }));
    const picked = stratifiedSample(rows, 100);
    expect(picked).toHaveLength(100);
    expect(picked.filter((r) => r.label === -1)).toHaveLength(50);
    expect(picked.map((r) => Number(r.id.slice(1)))).toEqual(
      [...picked.map((r) => Number(r.id.slice(1)))].sort((a, b) => a - b),
    );
    const tiny = stratifiedSample([...rows.slice(0, 1), ...rows.slice(1).filter((r) => r.label === -1)], 2);
    expect(new Set(tiny.map((r) => r.label))).toEqual(new Set([1, -1]));
  });
});
