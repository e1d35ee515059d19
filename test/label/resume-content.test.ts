import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, type CliRun, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Resume by content (issue 27, item 1), through the CLI on the simulated world: re-sampling into
 * the same samples.jsonl and rerunning the same `label` redoes the rows whose solution changed,
 * never counts them as resumed; `--strict-resume` exits 2 instead; an output written before rows
 * recorded their input's digest is kept with a warning (and refused under --strict-resume).
 */

let dir: string;
let home: string;
const run = async (args: string[]): Promise<CliRun> => startCli(args, home).done;

const sample = (seed: number, extra: string[] = []) =>
  run([
    'sample',
    '--dataset',
    'sim',
    '--count',
    '6',
    '--policy',
    'sim',
    '--n',
    '3',
    '--seed',
    String(seed),
    '--out',
    join(dir, 'samples.jsonl'),
    ...extra,
  ]);

const label = (extra: string[] = []) =>
  run([
    'label',
    '--input',
    join(dir, 'samples.jsonl'),
    '--dataset',
    'sim',
    '--count',
    '6',
    '--policy',
    'sim',
    '--rollouts',
    '2',
    '--out',
    join(dir, 'labels.jsonl'),
    '--json',
    ...extra,
  ]);

/** Chunk texts per solution id (`<problem>#<k>`) of a samples file. */
function sampleChunks(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of readFileSync(join(dir, 'samples.jsonl'), 'utf8').trim().split('\n')) {
    const r = JSON.parse(line) as {
      id: string;
      samples: Array<{ chunks: Array<{ text: string } | string> }>;
    };
    for (const [k, sample] of r.samples.entries())
      out.set(
        `${r.id}#${k}`,
        sample.chunks.map((c) => (typeof c === 'string' ? c : c.text)),
      );
  }
  return out;
}

const labelRows = () =>
  readFileSync(join(dir, 'labels.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; madeFrom?: string; chunks: Array<{ text: string }> });

const summaryOf = (r: CliRun) =>
  JSON.parse(r.stdout) as { resumed: number; redone: number; unverified: number; solutions: number };

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-resume-content-');
  home = join(dir, 'home');
});

describe('label resumes by content, not by id', () => {
  it('re-sampled solutions are redone; --strict-resume exits 2; unchanged rows resume', async () => {
    expect((await sample(1)).code).toBe(0);
    const first = await label();
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first)).toMatchObject({ solutions: 18, resumed: 0, redone: 0 });
    expect(labelRows().every((r) => /^[0-9a-f]{16}$/.test(r.madeFrom ?? ''))).toBe(true);
    const before = sampleChunks();

    // The same ids, other solutions: sampled again into the same file.
    expect((await sample(2, ['--fresh'])).code).toBe(0);
    const after = sampleChunks();
    const changed = [...after].filter(
      ([id, chunks]) => JSON.stringify(before.get(id)) !== JSON.stringify(chunks),
    );
    expect(changed.length).toBeGreaterThan(0);

    const bytes = readFileSync(join(dir, 'labels.jsonl'));
    const strict = await label(['--strict-resume']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(new RegExp(`${changed.length} rows were made from other input records`));
    // Refused before any work: the output is as it was.
    expect(readFileSync(join(dir, 'labels.jsonl')).equals(bytes)).toBe(true);

    const rerun = await label();
    expect(rerun.code, rerun.stderr).toBe(0);
    const s = summaryOf(rerun);
    expect(s.redone).toBe(changed.length);
    expect(s.resumed).toBe(18 - changed.length);
    expect(rerun.stderr).toContain(`${changed.length} redone (input changed)`);
    // Every row now holds the solution of its id in the samples file.
    const rows = labelRows();
    expect(rows).toHaveLength(18);
    for (const r of rows)
      expect(
        r.chunks.map((c) => c.text),
        r.id,
      ).toEqual(after.get(r.id));

    const again = await label();
    expect(summaryOf(again)).toMatchObject({ resumed: 18, redone: 0 });
  }, 120_000);

  it('rows of an older output (no digest) are kept with a warning, and refused under --strict-resume', async () => {
    const file = join(dir, 'labels.jsonl');
    const legacy = labelRows().map(({ madeFrom: _m, ...r }) => JSON.stringify(r));
    writeFileSync(file, `${legacy.join('\n')}\n`);
    const strict = await label(['--strict-resume']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('18 rows record no digest');
    const kept = await label();
    expect(kept.code, kept.stderr).toBe(0);
    expect(summaryOf(kept)).toMatchObject({ resumed: 18, redone: 0, unverified: 18 });
    expect(kept.stderr).toMatch(/warning: .* written before stepwise recorded what each row is made from/);
  }, 120_000);
});

describe('sample and search resume by content too', () => {
  it('an edited problem under the same id is sampled again (strict: exit 2 before any work)', async () => {
    const problems = join(dir, 'problems.jsonl');
    const rows = Array.from({ length: 5 }, (_, i) => ({
      id: `q${i}`,
      question: `What is ${i} + 1?`,
      answer: String(i + 1),
    }));
    const write = () => writeFileSync(problems, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    write();
    const out = join(dir, 'q-samples.jsonl');
    const args = (extra: string[] = []) => [
      'sample',
      '--dataset',
      'jsonl',
      '--path',
      problems,
      '--policy',
      'sim',
      '--sim-guess',
      '--n',
      '2',
      '--out',
      out,
      '--json',
      ...extra,
    ];
    const first = await run(args());
    expect(first.code, first.stderr).toBe(0);
    rows[3].question = 'What is 30 + 1?';
    rows[3].answer = '31';
    write();
    const bytes = readFileSync(out);
    const strict = await run(args(['--strict-resume']));
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/1 rows were made from other input records .*\(first: "q3"\)/);
    expect(readFileSync(out).equals(bytes)).toBe(true);
    const rerun = await run(args());
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ resumed: 4, redone: 1, unverified: 0 });
    const q3 = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; question: string })
      .find((r) => r.id === 'q3');
    expect(q3?.question).toBe('What is 30 + 1?');
  }, 120_000);
});
