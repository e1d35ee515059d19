import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCodePolicyPrompt } from '../../src/prompts/code.js';
import { startCli } from '../support/cli.js';
import { type Loopback, listenOnLoopback } from '../support/loopback.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * `stepwise search` over a code data set runs the strategies of src/search in the code domain:
 * a scripted OpenAI-compatible server answers each code policy prompt with the MBPP reference
 * solution, and the tests in the sandbox decide `correct`.
 */
const mbpp = readFileSync(sharedData('mbpp/mbpp.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .slice(0, 2)
  .map((l) => JSON.parse(l) as { text: string; code: string });

const bodies: Array<Record<string, unknown>> = [];
let server: Loopback;
const dir = tempDir('stepwise-code-search-');

beforeAll(async () => {
  server = await listenOnLoopback(
    http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/models') {
          res.end(JSON.stringify({ object: 'list', data: [{ id: 'coder', object: 'model' }] }));
          return;
        }
        const body = JSON.parse(raw) as { prompt: string; n?: number };
        bodies.push(body);
        const parsed = parseCodePolicyPrompt(body.prompt);
        const ref = mbpp.find((p) => parsed?.question.startsWith(p.text));
        const text = ref ? `${ref.code.replace(/\r\n/g, '\n')}\n` : 'no idea';
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'text_completion',
            created: 0,
            model: 'coder',
            choices: Array.from({ length: body.n ?? 1 }, (_, index) => ({
              index,
              text,
              finish_reason: 'stop',
              logprobs: null,
            })),
            usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
          }),
        );
      });
    }),
  );
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('stepwise search on a code data set', () => {
  it('poses the code prompt, stops at the closing fence and checks by running the tests', async () => {
    const out = join(dir, 'search.jsonl');
    const args = ['search', '--dataset', 'mbpp', '--path', sharedData('mbpp/mbpp.jsonl'), '--limit', '2'];
    args.push(
      '--strategy',
      'majority',
      '--n',
      '2',
      '--policy',
      'openai:coder',
      '--base-url',
      `${server.origin}/v1`,
    );
    // Asynchronously: the scripted server answers from this process.
    const run = await startCli([...args, '--out', out, '--quiet', '--json'], join(dir, 'home')).done;
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ problems: 2, correct: 2, accuracy: 1 });
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.correct)).toEqual([true, true]);
    expect(rows[1].finalText).toBe(mbpp[1]!.code.replace(/\r\n/g, '\n').trimEnd());
    expect(rows[1].chunks.length).toBeGreaterThan(0);
    // The code domain: the code prompt with the tests listed, the fence as stop, the code preset's budget.
    // One request per candidate (majority --n 2 on 2 problems), each with its own seed: the pool
    // of whole solutions is nested across N (src/search/pool.ts).
    expect(bodies).toHaveLength(4);
    expect(new Set(bodies.map((b) => b.seed)).size).toBe(4);
    for (const b of bodies) {
      expect(parseCodePolicyPrompt(b.prompt as string)?.question).toContain(
        'Your code should pass these tests:',
      );
      expect(b.n ?? 1).toBe(1);
      expect(b).toMatchObject({ stop: ['\n```'], max_tokens: 1024 });
    }
  });
});
