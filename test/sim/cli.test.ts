import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../src/cli/commands/sim.js';
import { loadJsonlProblems } from '../../src/data/jsonl.js';
import { loadProcessBench } from '../../src/data/processbench.js';
import { firstWrongStep, parseSimQuestion, simSuccessRate, solveSimProblem } from '../../src/sim/index.js';
import { tempDir } from '../support/temp.js';

const dir = tempDir('stepwise-sim-cli-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run `stepwise sim …` in process; returns what it printed on stdout. */
async function run(...args: string[]): Promise<string> {
  const program = new Command('stepwise').exitOverride();
  register(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'stepwise', 'sim', ...args]);
  } finally {
    spy.mockRestore();
  }
  return out;
}

describe('stepwise sim dataset', () => {
  it('writes problems that the jsonl loader reads, with gold answers and exact success rates', async () => {
    const file = join(dir, 'problems.jsonl');
    const summary = JSON.parse(
      await run('dataset', '--count', '25', '--out', file, '--seed', '4', '--max-steps', '6', '--json'),
    );
    expect(summary).toMatchObject({ simulated: true, kind: 'problems', count: 25 });
    const { records } = await loadJsonlProblems({ path: file });
    expect(records).toHaveLength(25);
    for (const r of records) {
      const p = parseSimQuestion(r.question)!;
      expect(p.ops.length).toBeLessThanOrEqual(6);
      expect(r.answer).toBe(String(solveSimProblem(p)));
      expect(r.meta?.success_rate).toBeCloseTo(simSuccessRate(p), 12);
    }
    expect(records[0].id).toBe('sim/4/0');
  });

  it('writes ProcessBench-format solutions whose labels are the true first errors', async () => {
    const file = join(dir, 'sim-pb.json');
    const summary = JSON.parse(
      await run(
        'dataset',
        '--processbench',
        '--count',
        '200',
        '--error-share',
        '0.5',
        '--out',
        file,
        '--json',
      ),
    );
    expect(summary).toMatchObject({ simulated: true, kind: 'processbench', count: 200, withError: 100 });
    const { records } = await loadProcessBench({ path: file });
    expect(records).toHaveLength(200);
    for (const r of records) {
      expect(r.label).toBe(firstWrongStep(r.problem, r.steps));
      expect(r.generator).toMatch(/simulated/);
    }
    // Error rows are spread through the file, not bunched at its start.
    expect(records.slice(0, 20).filter((r) => r.label >= 0)).toHaveLength(10);
    const jsonl = join(dir, 'sim-pb.jsonl');
    await run('dataset', '--processbench', '--count', '10', '--out', jsonl);
    expect(readFileSync(jsonl, 'utf8').trim().split('\n')).toHaveLength(10);
  });

  it('rejects bad options with a message', async () => {
    await expect(
      run('dataset', '--count', '2', '--out', join(dir, 'x.jsonl'), '--options', 'check_rat=0.2'),
    ).rejects.toThrow(/unknown option "check_rat"/);
  });

  it('prints an example with exact values', async () => {
    const ex = JSON.parse(await run('example', '--seed', '1'));
    expect(ex.simulated).toBe(true);
    expect(ex.chunks.length).toBeGreaterThan(2);
    expect(ex.successRate).toBeCloseTo(simSuccessRate(ex.question), 12);
  });
});
