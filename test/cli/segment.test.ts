import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProcessBench } from '../../src/data/index.js';
import { runCli } from '../data/run-cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

describe('stepwise segment', () => {
  it('--help at the top level lists segment, data and runs, each with a one-line description', () => {
    const { code, stdout } = runCli(['--help']);
    expect(code).toBe(0);
    for (const name of ['segment', 'data', 'runs'])
      expect(stdout).toMatch(new RegExp(`\\n  ${name}\\b[^\\n]*\\s{2,}\\S`));
  });

  it('--by paragraph --json on stdin prints chunks with spans into the input', () => {
    const text = 'First.\n\nSecond\nline.\n\n\nThird.';
    const { code, stdout } = runCli(['segment', '--by', 'paragraph', '-', '--json'], { input: text });
    expect(code).toBe(0);
    const { chunks } = JSON.parse(stdout) as {
      chunks: Array<{ index: number; text: string; span: { start: number; end: number } }>;
    };
    expect(chunks.map((c) => c.text)).toEqual(['First.', 'Second\nline.', 'Third.']);
    for (const c of chunks) expect(text.slice(c.span.start, c.span.end)).toBe(c.text);
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('reads a FILE; steps, lines and tags modes (tags, the name on every command)', () => {
    const dir = tempDir('stepwise-seg-');
    writeFileSync(join(dir, 's.txt'), 'Step 1: a\nStep 2: b\n  c');
    const steps = JSON.parse(runCli(['segment', '--by', 'steps', join(dir, 's.txt'), '--json']).stdout);
    expect(steps.chunks.map((c: { text: string }) => c.text)).toEqual(['Step 1: a', 'Step 2: b\n  c']);
    const lines = JSON.parse(runCli(['segment', '--by', 'lines', join(dir, 's.txt'), '--json']).stdout);
    expect(lines.chunks.map((c: { text: string }) => c.text)).toEqual(['Step 1: a', 'Step 2: b', '  c']);
    const tags = JSON.parse(
      runCli(['segment', '--by', 'tags', '--json'], { input: '<chunk>x</chunk> <chunk>y</chunk>' }).stdout,
    );
    expect(tags).toEqual({
      chunks: [
        { index: 0, text: 'x', span: { start: 0, end: 1 } },
        { index: 1, text: 'y', span: { start: 2, end: 3 } },
      ],
      text: 'x y',
    });
    // `tags`, the mode's name on every command, under --segmentation as under --by.
    const now = runCli(['segment', '--segmentation', 'tags', '--json'], {
      input: '<chunk>x</chunk> <chunk>y</chunk>',
    });
    expect(JSON.parse(now.stdout)).toEqual(tags);
    const help = runCli(['segment', '--help']).stdout;
    expect(help.replace(/\s+/g, ' ')).toContain('(choices: "paragraph", "steps", "tags", "lines", "llm"');
  });

  it("--original validates a model's <chunk> tagging and falls back with the reason", () => {
    const dir = tempDir('stepwise-seg-');
    writeFileSync(join(dir, 'orig.txt'), 'Let x = 2.\n\nThen 2x = 4.');
    const good = runCli(['segment', '--original', join(dir, 'orig.txt'), '--json'], {
      input: '<chunk>Let x = 2.\n\nThen 2x = 4.</chunk>',
    });
    expect(JSON.parse(good.stdout)).toEqual({
      chunks: [{ index: 0, text: 'Let x = 2.\n\nThen 2x = 4.', span: { start: 0, end: 24 } }],
      accepted: true,
    });
    const bad = runCli(['segment', '--original', join(dir, 'orig.txt'), '--fallback', 'lines', '--json'], {
      input: '<chunk>Let x = 2.</chunk>\n\n<chunk>Then 2x = 5.</chunk>',
    });
    const out = JSON.parse(bad.stdout);
    expect(out.accepted).toBe(false);
    expect(out.reason).toMatch(/do not strip back to the original text/);
    expect(out.chunks.map((c: { text: string }) => c.text)).toEqual(['Let x = 2.', 'Then 2x = 4.']);
    expect(bad.stderr).toMatch(/tagging rejected .*used --fallback lines/);
  });

  it('a missing file or an unknown mode exits 2 without a stack trace', () => {
    const missing = runCli(['segment', '/nonexistent/file.txt', '--json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/\/nonexistent\/file\.txt: file not found/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const bad = runCli(['segment', '--by', 'sentences']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are paragraph, steps, tags, lines/);
  });

  it('acceptance 4 through the CLI: ProcessBench steps joined by blank lines come back (records with the most steps per subset)', async () => {
    const { records } = await loadProcessBench({ path: sharedData('processbench') });
    // The library test covers all 3,400 records; here the CLI path, on the hardest record of each subset.
    for (const subset of ['gsm8k', 'math', 'olympiadbench', 'omnimath']) {
      const record = records
        .filter((r) => r.subset === subset)
        .reduce((a, b) => (b.steps.length > a.steps.length ? b : a));
      const { code, stdout } = runCli(['segment', '--by', 'paragraph', '--json'], {
        input: record.steps.join('\n\n'),
      });
      expect(code).toBe(0);
      const texts = (JSON.parse(stdout).chunks as Array<{ text: string }>).map((c) => c.text.trim());
      expect(texts).toEqual(record.steps.map((s) => s.trim()));
    }
  });
});
