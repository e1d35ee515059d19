import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODE_POLICY_INSTRUCTION } from '../../src/prompts/code.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const bin = new URL('../../bin/stepwise.js', import.meta.url).pathname;

describe('stepwise sample on a code set', () => {
  it('poses code problems with the code prompt and checks answers by running the tests', async () => {
    const path = sharedData('humaneval/HumanEval.jsonl');
    const tasks = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .slice(0, 2)
      .map((l) => JSON.parse(l) as { prompt: string; canonical_solution: string; entry_point: string });
    const prompts: string[] = [];
    // A scripted server: answers task 0 with its reference solution in a fence, task 1 with a wrong body.
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const { prompt } = JSON.parse(body) as { prompt: string };
        prompts.push(prompt);
        const task = tasks.find((t) => prompt.includes(t.entry_point))!;
        const good = task === tasks[0];
        const text = good
          ? `${task.prompt}${task.canonical_solution}\`\`\``
          : `${task.prompt}    return None\n\`\`\``;
        const reply = JSON.stringify({
          id: 'x',
          object: 'text_completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(reply);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const dir = tempDir('stepwise-code-sample-');
    const out = join(dir, 'samples.jsonl');
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(
          'node',
          [
            bin,
            'sample',
            '--dataset',
            'humaneval',
            '--path',
            path,
            '--limit',
            '2',
            '--policy',
            'openai:m',
            '--base-url',
            `http://127.0.0.1:${port}/v1`,
            '--n',
            '1',
            '--out',
            out,
          ],
          { env: { ...process.env, STEPWISE_HOME: dir, STEPWISE_QUIET: '1' }, stdio: 'ignore' },
        );
        child.on('exit', resolve);
      });
      expect(code).toBe(0);
      expect(prompts).toHaveLength(2);
      for (const p of prompts) {
        expect(p).toContain(CODE_POLICY_INSTRUCTION);
        expect(p).not.toContain('\\boxed');
      }
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rows.map((r) => r.samples[0].correct)).toEqual([true, false]);
    } finally {
      server.close();
    }
  });
});
