import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const ROOT = new URL('../..', import.meta.url).pathname;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('sim refuses other worlds, one vocabulary, methods in the repository', () => {
  let dir: string;
  let home: string;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-vocab-');
    home = join(dir, 'home');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("acceptance 3: solve with sim models on a question outside the simulated world exits 2 naming the world's problems", async () => {
    const run = await startCli(
      ['solve', '--policy', 'sim', '--judge', 'sim:generative', 'What is 17 * 23?'],
      home,
    ).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/simulated world's problems/);
    expect(run.stderr).toMatch(/--dataset sim/);
    expect(run.stderr).toMatch(/--sim-guess/);
    expect(run.stdout).toBe('');
    // A question of the simulated world is answered; --sim-guess lets it guess.
    const example = await startCli(['sim', 'example'], home).done;
    const question = (JSON.parse(example.stdout) as { question: string }).question;
    const sim = await startCli(['solve', '--policy', 'sim', '--judge', 'sim:generative', question], home)
      .done;
    expect(sim.code).toBe(0);
    const guess = await startCli(
      [
        'solve',
        '--policy',
        'sim',
        '--judge',
        'sim:generative',
        '--sim-guess',
        '--max-steps',
        '3',
        'What is 17 * 23?',
      ],
      home,
    ).done;
    expect(guess.code).toBe(0);
  });

  it('sample with a sim policy on a real data set exits 2 too', async () => {
    const gsm8k = sharedData('gsm8k/test.jsonl');
    const run = await startCli(
      [
        'sample',
        '--dataset',
        'gsm8k',
        '--path',
        gsm8k,
        '--limit',
        '2',
        '--policy',
        'sim',
        '--n',
        '1',
        '--out',
        join(dir, 'g.jsonl'),
      ],
      home,
    ).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/simulated world's problems/);
  });

  it('acceptance 4 and 5: label --input … --dataset sim; --model is an unknown option; export and eval chunks take --input', async () => {
    const S = join(dir, 'S.jsonl');
    const L = join(dir, 'L.jsonl');
    const sample = await startCli(
      ['sample', '--dataset', 'sim', '--limit', '5', '--policy', 'sim', '--n', '2', '--out', S],
      home,
    ).done;
    expect(sample.code).toBe(0);
    const label = await startCli(
      ['label', '--input', S, '--dataset', 'sim', '--policy', 'sim', '--rollouts', '2', '--out', L],
      home,
    ).done;
    expect(label.stderr).not.toMatch(/stepwise:/);
    expect(label.code).toBe(0);
    expect(readFileSync(L, 'utf8').trim().split('\n')).toHaveLength(10);

    const typo = await startCli(
      ['sample', '--dataset', 'sim', '--model', 'sim', '--n', '2', '--out', join(dir, 'X.jsonl')],
      home,
    ).done;
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option '--model'/);
    expect(typo.stderr).not.toMatch(/--policy/);

    const exp = await startCli(
      ['export', '--input', L, '--task', 'prm', '--format', 'trl', '--out', join(dir, 'E.jsonl')],
      home,
    ).done;
    expect(exp.code).toBe(0);
    expect(readFileSync(join(dir, 'E.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    // The old name still works, hidden from help.
    const old = await startCli(
      ['export', '--from', L, '--task', 'prm', '--format', 'trl', '--out', join(dir, 'E2.jsonl')],
      home,
    ).done;
    expect(old.code).toBe(0);
    const help = await startCli(['export', '--help'], home).done;
    expect(help.stdout).toMatch(/--input <file>.*\n?.*\(required\)/s);
    expect(help.stdout).not.toMatch(/--from/);
    const missing = await startCli(
      ['export', '--task', 'prm', '--format', 'trl', '--out', join(dir, 'E3.jsonl')],
      home,
    ).done;
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/required option '--input <file>'/);

    const chunks = await startCli(
      ['eval', 'chunks', '--input', L, '--judge', 'sim:generative', '--signal', 'abs-q', '--json'],
      home,
    ).done;
    expect(chunks.code).toBe(0);
    expect(JSON.parse(chunks.stdout).solutions).toBe(10);
  });

  it('acceptance 5: docs/methods.md exists and has every METHODS section that src/ cites', () => {
    const methods = readFileSync(join(ROOT, 'docs/methods.md'), 'utf8');
    const sections = new Set([...methods.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
    expect(sections.size).toBeGreaterThanOrEqual(6);
    const cited: Array<{ file: string; n: number }> = [];
    for (const file of filesUnder(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:METHODS(?:\.md)?|methods\.md)\s*§\s*(\d+)(?:\s*[–-]\s*(\d+))?/g)) {
        cited.push({ file, n: Number(m[1]) });
        if (m[2]) cited.push({ file, n: Number(m[2]) });
      }
    }
    expect(cited.length).toBeGreaterThan(10);
    const missing = cited.filter((c) => !sections.has(c.n)).map((c) => `${c.file} §${c.n}`);
    expect(missing).toEqual([]);
    // The table's files exist.
    const paths = [...methods.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]);
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) expect(existsSync(join(ROOT, p)), p).toBe(true);
  });
});
