import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../data/run-cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

describe('stepwise data', () => {
  it('data --help explains its subcommands and arguments', () => {
    const { code, stdout } = runCli(['data', '--help']);
    expect(code).toBe(0);
    for (const s of [
      'show',
      'pull',
      '<name>',
      'gsm8k|math|math500|processbench|prm800k|mathshepherd|humaneval|mbpp|jsonl',
      '--path',
      '--limit',
      '--skip-invalid',
      '--json',
      'STEPWISE_DATA',
    ])
      expect(stdout).toContain(s);
    const show = runCli(['data', 'show', '--help']);
    expect(show.stdout).toMatch(/--path <file-or-dir>\s+\S/);
  });

  it('acceptance 3: processbench prints 3,400 lines with id, problem, steps (strings), integer label', () => {
    const { code, stdout } = runCli([
      'data',
      'show',
      'processbench',
      '--path',
      sharedData('processbench'),
      '--json',
    ]);
    expect(code).toBe(0);
    const rows = jsonLines(stdout);
    expect(rows).toHaveLength(3400);
    for (const r of rows) {
      expect(typeof r.id).toBe('string');
      expect(typeof r.problem).toBe('string');
      expect(Array.isArray(r.steps) && (r.steps as unknown[]).every((s) => typeof s === 'string')).toBe(true);
      expect(Number.isInteger(r.label)).toBe(true);
    }
  });

  it('acceptance 3: gsm8k 1,319 (id, question, answer), math500 via `data show math` 500, humaneval 164, mbpp 974', () => {
    const cases: Array<[string[], number]> = [
      [['gsm8k', '--path', sharedData('gsm8k/test.jsonl')], 1319],
      [['math', '--path', sharedData('math500/test.jsonl')], 500],
      [['humaneval', '--path', sharedData('humaneval/HumanEval.jsonl')], 164],
      [['mbpp', '--path', sharedData('mbpp/mbpp.jsonl')], 974],
    ];
    for (const [args, n] of cases) {
      const { code, stdout } = runCli(['data', 'show', ...args, '--json']);
      expect(code).toBe(0);
      const rows = jsonLines(stdout);
      expect(rows).toHaveLength(n);
      for (const r of rows) {
        expect(typeof r.id).toBe('string');
        expect(typeof r.question).toBe('string');
        expect(typeof r.answer).toBe('string');
      }
    }
  });

  it('acceptance 5: a JSONL whose line 3 is broken exits 2 naming file and line 3, no stack trace', () => {
    const dir = tempDir('stepwise-cli-');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(
      bad,
      '{"question":"a","answer":"1"}\n{"question":"b","answer":"2"}\n{"question": "c", "answer\n{"question":"d","answer":"4"}\n',
    );
    const { code, stdout, stderr } = runCli(['data', 'show', 'jsonl', '--path', bad, '--json']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${bad}, line 3`);
    expect(stderr).not.toMatch(/\n\s+at /);
    const skipped = runCli(['data', 'show', 'jsonl', '--path', bad, '--json', '--skip-invalid']);
    expect(skipped.code).toBe(0);
    expect(jsonLines(skipped.stdout).map((r) => r.question)).toEqual(['a', 'b', 'd']);
    expect(skipped.stderr).toMatch(/1 invalid skipped/);
  });

  it('a bad field names it; --limit, --split and the default human output work', () => {
    const dir = tempDir('stepwise-cli-');
    writeFileSync(join(dir, 'g.jsonl'), '{"question":"q","answer":"#### 1"}\n{"question":"q2"}\n');
    const bad = runCli(['data', 'show', 'gsm8k', '--path', join(dir, 'g.jsonl'), '--json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${join(dir, 'g.jsonl')}, line 2, field "answer"`);
    const limited = runCli([
      'data',
      'show',
      'processbench',
      '--path',
      sharedData('processbench'),
      '--split',
      'omnimath',
      '--limit',
      '2',
      '--json',
    ]);
    expect(jsonLines(limited.stdout).map((r) => r.subset)).toEqual(['omnimath', 'omnimath']);
    const human = runCli(['data', 'show', 'gsm8k', '--path', sharedData('gsm8k/test.jsonl'), '--limit', '1']);
    expect(human.stdout).toMatch(/^gsm8k\/test\/0\tJanet.*→ 18\n$/);
    expect(runCli(['data', 'show', 'nosuchset']).stderr).toMatch(/unknown data set "nosuchset"/);
  });

  it('data pull fails fast with a clear message when offline (this machine is)', () => {
    const cache = tempDir('stepwise-cache-');
    const { code, stderr } = runCli(['data', 'pull', 'humaneval', '--timeout', '3'], {
      env: { STEPWISE_CACHE: cache },
    });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(
      /could not download humaneval from https:\/\/raw\.githubusercontent\.com\/openai\/human-eval/,
    );
    expect(stderr).toContain(join(cache, 'data/humaneval/HumanEval.jsonl.gz'));
    expect(stderr).not.toMatch(/\n\s+at /);
    const math = runCli(['data', 'pull', 'math']);
    expect(math.code).toBe(2);
    expect(math.stderr).toMatch(/cannot pull math/);
  });

  it('a reader that stops early (| head -n 1) ends the output quietly, without an EPIPE trace', () => {
    const cmd = `node bin/stepwise.js data show processbench --path '${sharedData('processbench')}' --json | head -n 1`;
    const r = spawnSync('sh', ['-c', cmd], {
      cwd: new URL('../..', import.meta.url).pathname,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe('gsm8k-0');
    expect(r.stderr).not.toMatch(/EPIPE|\n\s+at /);
  });
});
