import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runsOf, runUntilStopped, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';
import { startTaggingServer } from './tagging-server.js';

interface Row {
  id: string;
  chunks: Array<{ text: string; span: { start: number; end: number } }>;
  method: string;
  attempts: number;
  rejected: string[];
}

const dir = tempDir('stepwise-segllm-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stepwise segment --by llm (issue 15, acceptance 1)', () => {
  it('segments 12 ProcessBench GSM8K solutions exactly, retrying the replies with a changed digit', async () => {
    const pb = JSON.parse(readFileSync(sharedData('processbench/gsm8k.json'), 'utf8')) as Array<{
      id: string;
      steps: string[];
    }>;
    const inputs = pb.slice(0, 12).map((r) => ({ id: r.id, text: r.steps.join('\n\n') }));
    const input = join(dir, 'in.jsonl');
    const out = join(dir, 'out.jsonl');
    writeFileSync(input, inputs.map((r) => JSON.stringify(r)).join('\n'));
    const server = await startTaggingServer({ alterEvery: 3 });
    try {
      const args = [
        'segment',
        '--segmentation',
        'llm',
        '--model',
        'openai:m',
        '--base-url',
        server.url,
        '--input',
        input,
        '--out',
        out,
      ];
      const run = await startCli([...args, '--json'], join(dir, 'home')).done;
      expect(run.stderr).not.toMatch(/stepwise:/);
      expect(run.stderr).toMatch(/^segment --segmentation llm: 12 solutions \(0 resumed\)/m);
      expect(run.code).toBe(0);
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      expect(rows.map((r) => r.id)).toEqual(inputs.map((r) => r.id));
      for (const [i, row] of rows.entries()) {
        const text = inputs[i].text;
        let last = 0;
        for (const c of row.chunks) {
          expect(c.text).toBe(text.slice(c.span.start, c.span.end));
          expect(c.span.start).toBeGreaterThanOrEqual(last);
          // Between chunks (and around them) only whitespace is left out.
          expect(text.slice(last, c.span.start).trim()).toBe('');
          last = c.span.end;
        }
        expect(text.slice(last).trim()).toBe('');
      }
      expect(rows.filter((r) => r.chunks.length > 1).length).toBeGreaterThanOrEqual(10);
      // Every third reply had a digit changed: those were rejected and asked for again.
      expect(server.replies.some((r) => r.altered)).toBe(true);
      expect(server.replies.length).toBeGreaterThan(inputs.length);
      // Eight solutions are in flight, so one solution can meet altered replies on every attempt:
      // it then falls back to paragraphs, and only then.
      expect(rows.every((r) => r.method === 'llm' || r.rejected.length === r.attempts)).toBe(true);
      expect(rows.filter((r) => r.method === 'llm').length).toBeGreaterThanOrEqual(10);
      expect(rows.reduce((a, r) => a + r.rejected.length, 0)).toBe(
        server.replies.filter((r) => r.altered).length,
      );
      const summary = JSON.parse(run.stdout) as {
        solutions: number;
        requests: number;
        rejectedReplies: number;
        chunksPerSolution: { paragraphs: number; segmented: number };
      };
      expect(summary.solutions).toBe(12);
      expect(summary.requests).toBe(server.replies.length);
      expect(summary.rejectedReplies).toBeGreaterThan(0);
      expect(summary.chunksPerSolution.segmented).toBeGreaterThan(summary.chunksPerSolution.paragraphs);

      // A rerun resumes: nothing is asked again.
      const before = server.replies.length;
      const again = await startCli([...args, '--json'], join(dir, 'home')).done;
      expect(again.code).toBe(0);
      expect(server.replies.length).toBe(before);
      expect(JSON.parse(again.stdout).resumed).toBe(12);
      // Resuming with another acceptance rule would mix settings: refused, naming the setting.
      const other = await startCli([...args, '--whitespace', 'exact'], join(dir, 'home')).done;
      expect(other.code).toBe(2);
      expect(other.stderr).toContain('--whitespace');
    } finally {
      await server.close();
    }
  }, 60_000);

  it('Ctrl-C: finished rows are kept, the run is recorded as interrupted with the whole hint, a rerun resumes', async () => {
    const inputs = Array.from({ length: 40 }, (_, i) => ({
      id: `s${i}`,
      text: `One is ${i}.\n\nTwo is ${i + 1}.`,
    }));
    const input = join(dir, 'int-in.jsonl');
    const out = join(dir, 'int-out.jsonl');
    const home = join(dir, 'int-home');
    writeFileSync(input, inputs.map((r) => JSON.stringify(r)).join('\n'));
    const server = await startTaggingServer({ alterEvery: 1000, delayMs: 150 });
    try {
      const args = ['segment', '--segmentation', 'llm', '--model', 'openai:m', '--base-url', server.url];
      const all = [...args, '--input', input, '--out', out, '--concurrency', '1'];
      const rows = (): number =>
        existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean).length : 0;
      const deadline = Date.now() + 120_000;
      const stopped = await runUntilStopped(all, home, () => rows() >= 2 || Date.now() > deadline, 20);
      expect(stopped.code, stopped.stderr).toBe(130);
      const kept = rows();
      expect(kept).toBeGreaterThanOrEqual(2);
      expect(kept).toBeLessThan(40);
      expect(stopped.stderr).toMatch(/run \S+ \(`stepwise segment`\) recorded as interrupted/);
      expect(stopped.stderr).toContain(`finished work is kept in ${out}`);
      expect(stopped.stderr).toContain('rerun the same command to resume');
      expect((await runsOf(home, '--status', 'interrupted')).map((r) => r.command)).toEqual(['segment']);
      const again = await startCli([...all, '--json'], home).done;
      expect(again.code, again.stderr).toBe(0);
      const summary = JSON.parse(again.stdout) as { solutions: number; resumed: number };
      expect(summary.solutions).toBe(40);
      expect(summary.resumed).toBeGreaterThanOrEqual(kept);
    } finally {
      await server.close();
    }
  }, 300_000);
});
