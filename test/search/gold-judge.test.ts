import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeReadsGold } from '../../src/judge/spec.js';
import { startCli } from '../support/cli.js';
import { startSimServeCli } from '../support/sim-serve.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 16, acceptance 1 and item 7: a judge that reads the gold answer does not steer `search`,
 * `solve` or `bench search` unless `--allow-gold-judge` is given, and then every result says so.
 */

const dir = tempDir('stepwise-gold-judge-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

describe('gold-reading judges', () => {
  it('judgeReadsGold: rollout judges, simulated outcome models and the oracle PRM, not the others', () => {
    expect(judgeReadsGold('prm:sim?prm=oracle')).toBe(true);
    expect(judgeReadsGold('sim:prm?prm_noise=0.5&prm=oracle')).toBe(true);
    expect(judgeReadsGold('prm:openai:anything?prm=oracle')).toBe(true);
    expect(judgeReadsGold('prm:sim')).toBe(false);
    expect(judgeReadsGold('prm:sim?prm=value')).toBe(false);
    expect(judgeReadsGold('prm:openai:Qwen/Qwen2.5-Math-PRM-7B')).toBe(false);
    expect(judgeReadsGold('rollout:sim')).toBe(true);
    expect(judgeReadsGold('rollout:openai:m?rollouts=4')).toBe(true);
    expect(judgeReadsGold('sim:orm')).toBe(true);
    expect(judgeReadsGold('orm:sim?orm_sensitivity=0.9')).toBe(true);
    expect(judgeReadsGold('orm:openai:my-orm')).toBe(false);
    expect(judgeReadsGold('generative:openai:j')).toBe(false);
    expect(judgeReadsGold('sim:generative')).toBe(false);
  });

  it('acceptance 1: search --judge rollout:sim exits 2 naming --allow-gold-judge', async () => {
    const out = join(dir, 'F.jsonl');
    const r = await startCli(
      [
        'search',
        '--dataset',
        'sim',
        '--limit',
        '2',
        '--strategy',
        'best-of-n',
        '--policy',
        'sim',
        '--judge',
        'rollout:sim',
        '--out',
        out,
      ],
      home,
    ).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-gold-judge');
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('solve and bench search refuse too; with the flag every search line says the judge used gold', async () => {
    const solve = await startCli(
      [
        'solve',
        'What is 2 + 3?',
        '--sim-guess',
        '--policy',
        'sim',
        '--judge',
        'rollout:sim',
        '--strategy',
        'chunk-reset',
      ],
      home,
    ).done;
    expect(solve.code).toBe(2);
    expect(solve.stderr).toContain('--allow-gold-judge');
    const bench = await startCli(
      [
        'bench',
        'search',
        '--dataset',
        'sim',
        '--limit',
        '2',
        '--policy',
        'sim',
        '--judge',
        'sim:generative',
        '--outcome',
        'sim:orm',
        '--strategies',
        'refine',
        '--out',
        join(dir, 'b.json'),
      ],
      home,
    ).done;
    expect(bench.code).toBe(2);
    expect(bench.stderr).toMatch(/--outcome sim:orm .*--allow-gold-judge/s);

    const out = join(dir, 'allowed.jsonl');
    const r = await startCli(
      [
        'search',
        '--dataset',
        'sim',
        '--limit',
        '2',
        '--strategy',
        'best-of-n',
        '--n',
        '2',
        '--policy',
        'sim',
        '--judge',
        'rollout:sim?rollouts=2',
        '--allow-gold-judge',
        '--out',
        out,
        '--json',
      ],
      home,
    ).done;
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.code).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l.judgeUsedGold).toBe(true);
    expect(JSON.parse(r.stdout).judgeUsedGold).toBe(true);
  });

  it('decided by what the judge reads: an outcome model the sim server answers is refused under any name, or recorded with the flag', async () => {
    const server = await startSimServeCli(join(dir, 'serve-home'));
    try {
      const args = (out: string) => [
        'search',
        '--dataset',
        'sim',
        '--count',
        '2',
        '--strategy',
        'refine',
        '--policy',
        'openai:sim',
        '--judge',
        'generative:openai:sim',
        '--outcome',
        'orm:openai:anything',
        '--base-url',
        server.baseURL,
        '--out',
        join(dir, out),
      ];
      const refused = await startCli(args('served.jsonl'), home).done;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /orm:openai:anything is answered by the simulated world.*--allow-gold-judge/s,
      );
      const allowed = await startCli([...args('served-allowed.jsonl'), '--allow-gold-judge', '--json'], home)
        .done;
      expect(allowed.code, allowed.stderr).toBe(0);
      const lines = readFileSync(join(dir, 'served-allowed.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(2);
      for (const l of lines) expect(l).toMatchObject({ judgeUsedGold: true, simulated: true });
      expect(JSON.parse(allowed.stdout).judgeUsedGold).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
