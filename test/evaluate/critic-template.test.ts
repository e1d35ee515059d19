import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 16, acceptance 5: `eval processbench --judge critic:openai:m --critic-template FILE` sends
 * the template's text verbatim, its `{problem}` and `{tagged_response}` slots filled. The template
 * is the official ProcessBench one, read from ../shared/data (data: never copied into the repo).
 */

const dir = tempDir('stepwise-critic-template-');
const received: string[] = [];
let server: http.Server;
let url = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', owned_by: 'test' }] }));
        return;
      }
      const parsed = JSON.parse(body);
      received.push(parsed.messages[parsed.messages.length - 1].content);
      const n = parsed.n ?? 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: Array.from({ length: n }, (_, index) => ({
            index,
            message: { role: 'assistant', content: 'All paragraphs are fine. \\boxed{-1}' },
            finish_reason: 'stop',
          })),
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('eval processbench --critic-template', () => {
  it('acceptance 5: the template text is sent verbatim with the slots filled', async () => {
    const templateFile = sharedData('processbench/critic_template.txt');
    const template = readFileSync(templateFile, 'utf8');
    const pb = join(dir, 'pb');
    mkdirSync(pb);
    const rows = [
      {
        id: 'g-0',
        generator: 't',
        problem: 'What is $2 + 3$?',
        steps: ['2 + 3 = 5.', 'So \\boxed{5}.'],
        final_answer_correct: true,
        label: -1,
      },
      {
        id: 'g-1',
        generator: 't',
        problem: 'What is 4 · 2?',
        steps: ['4 · 2 = 6.', 'So \\boxed{6}.'],
        final_answer_correct: false,
        label: 0,
      },
    ];
    writeFileSync(join(pb, 'gsm8k.json'), JSON.stringify(rows));
    const out = join(dir, 'F.json');
    const r = await startCli(
      [
        'eval',
        'processbench',
        '--judge',
        'critic:openai:m',
        '--base-url',
        url,
        '--critic-template',
        templateFile,
        '--path',
        pb,
        '--subsets',
        'gsm8k',
        '--out',
        out,
        '--no-cache',
      ],
      join(dir, 'home'),
    ).done;
    expect(r.code, r.stderr).toBe(0);
    const expected = rows.map((row) => {
      const tagged = row.steps.map((s, i) => `<paragraph_${i}>\n${s}\n</paragraph_${i}>`).join('\n\n');
      return template.replace('{problem}', () => row.problem).replace('{tagged_response}', () => tagged);
    });
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(received)).toEqual(new Set(expected));
    // Every line of the template reaches the server unchanged.
    for (const line of template.split('\n').filter((l) => !l.includes('{')))
      expect(received[0]).toContain(line);

    // A template without its slots is refused, naming the file.
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'Judge this: {problem}');
    const refused = await startCli(
      [
        'eval',
        'processbench',
        '--judge',
        'critic:openai:m',
        '--base-url',
        url,
        '--critic-template',
        bad,
        '--path',
        pb,
        '--subsets',
        'gsm8k',
        '--out',
        join(dir, 'G.json'),
      ],
      join(dir, 'home'),
    ).done;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('bad.txt');
    expect(refused.stderr).toContain('{tagged_response}');
  });
});
