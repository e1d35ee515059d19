import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODE_POLICY_INSTRUCTION, CODE_TAGS_POLICY_INSTRUCTION } from '../../src/prompts/code.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const bin = new URL('../../bin/stepwise.js', import.meta.url).pathname;

type Task = { prompt: string; canonical_solution: string; entry_point: string };

/**
 * `stepwise sample` on the first two HumanEval tasks against a scripted server whose reply to
 * each task is `reply(task, good)` (good: task 0). Returns the prompts it got and the rows written.
 */
async function sampleAgainst(
  reply: (task: Task, good: boolean) => string,
  extraArgs: string[] = [],
): Promise<{ prompts: string[]; rows: Array<{ samples: Array<Record<string, unknown>> }> }> {
  const path = sharedData('humaneval/HumanEval.jsonl');
  const tasks = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(0, 2)
    .map((l) => JSON.parse(l) as Task);
  const prompts: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      // The client asks GET /v1/models once for the cache's model fingerprint; this server has no model list.
      if (req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"not found"}');
        return;
      }
      const { prompt } = JSON.parse(body) as { prompt: string };
      prompts.push(prompt);
      const task = tasks.find((t) => prompt.includes(t.entry_point))!;
      const text = reply(task, task === tasks[0]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'text_completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
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
          ...extraArgs,
        ],
        { env: { ...process.env, STEPWISE_HOME: dir, STEPWISE_QUIET: '1' }, stdio: 'ignore' },
      );
      child.on('exit', resolve);
    });
    expect(code).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    return { prompts, rows };
  } finally {
    server.close();
  }
}

describe('stepwise sample on a code set', () => {
  it('poses code problems with the code prompt and checks answers by running the tests', async () => {
    // Task 0 answered with its reference solution in a fence, task 1 with a wrong body.
    const { prompts, rows } = await sampleAgainst((task, good) =>
      good ? `${task.prompt}${task.canonical_solution}\`\`\`` : `${task.prompt}    return None\n\`\`\``,
    );
    expect(prompts).toHaveLength(2);
    for (const p of prompts) {
      expect(p).toContain(CODE_POLICY_INSTRUCTION);
      expect(p).not.toContain('\\boxed');
    }
    expect(rows.map((r) => r.samples[0].correct)).toEqual([true, false]);
  });

  it('--segmentation tags: asks for <chunk> lines, keeps the chunks with their indentation, runs the code without them', async () => {
    const tagged = (head: string, body: string) =>
      `<chunk>\n${head.trimEnd()}\n</chunk>\n<chunk>\n${body.trimEnd()}\n</chunk>\n\`\`\``;
    const { prompts, rows } = await sampleAgainst(
      (task, good) => tagged(task.prompt, good ? task.canonical_solution : '    return None'),
      ['--segmentation', 'tags'],
    );
    for (const p of prompts) expect(p).toContain(CODE_TAGS_POLICY_INSTRUCTION);
    expect(rows.map((r) => r.samples[0].correct)).toEqual([true, false]);
    for (const r of rows) {
      const chunks = r.samples[0].chunks as Array<{ text: string }>;
      expect(r.samples[0].segmentation).toBe('tags');
      expect(chunks).toHaveLength(2);
      expect(chunks[1].text.startsWith('    ')).toBe(true);
    }
  });
});
