import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { type FlakyServer, startFlakyServer } from '../support/flaky-server.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/** Issue 13, acceptance 6: `label --chat-template` sends the model's own rendering, continuing the assistant turn. */
const QWEN_HEAD =
  '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n';
const ASSISTANT = '<|im_start|>assistant\n';
const chunks = ['First, 2 + 3 = 5.', 'Then 5 times 2 is 10.', 'So the answer is \\boxed{10}.'];

let dir: string;
let server: FlakyServer;
beforeAll(async () => {
  dir = tempDir('stepwise-chat-template-cli-');
  writeFileSync(
    join(dir, 'L.jsonl'),
    `${JSON.stringify({ id: 's1', problem: 'What is (2 + 3) times 2?', answer: '10', steps: chunks })}\n`,
  );
  server = await startFlakyServer({ rate500: 0, rate429: 0, dropRate: 0, delayRate: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const template = () => sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja');
const args = (out: string, extra: string[]) => [
  'label',
  '--input',
  join(dir, 'L.jsonl'),
  '--policy',
  'openai:m',
  '--base-url',
  server.url,
  '--rollouts',
  '2',
  '--signals',
  'abs-q',
  '--out',
  out,
  '--no-cache',
  ...extra,
];

describe('label --chat-template', () => {
  it("sends raw prompts in the model's own template that continue the assistant turn with nothing but the prefix", async () => {
    const out = join(dir, 'O.jsonl');
    const run = await startCli(args(out, ['--chat-template', template()]), join(dir, 'home')).done;
    expect(run.code, run.stderr).toBe(0);
    const prompts = server.requests
      .filter((q) => q.path === '/v1/completions')
      .map((q) => q.body.prompt as string);
    expect(prompts.length).toBeGreaterThanOrEqual(3);
    const prefixes = [0, 1, 2, 3].map((k) => (k === 0 ? '' : `${chunks.slice(0, k).join('\n\n')}\n\n`));
    const seen = new Set<string>();
    for (const p of prompts) {
      expect(p.startsWith(QWEN_HEAD)).toBe(true);
      const at = p.indexOf(ASSISTANT);
      expect(at).toBeGreaterThan(QWEN_HEAD.length);
      const after = p.slice(at + ASSISTANT.length);
      expect(prefixes).toContain(after);
      seen.add(after);
    }
    expect(seen.has(prefixes[1])).toBe(true);
    // Recorded with the job's settings on every row.
    const record = JSON.parse(readFileSync(out, 'utf8').trim());
    expect(record.job.settings.chatTemplate).toMatch(
      /^Qwen-Qwen2\.5-7B-Instruct\.jinja@sha256:[0-9a-f]{16}$/,
    );
  });

  it('refuses to resume with a different rendering, and to combine it with --prompt-form chat', async () => {
    const out = join(dir, 'O.jsonl');
    const other = await startCli(
      args(out, ['--chat-template', sharedData('chat-templates/Qwen-QwQ-32B.jinja')]),
      join(dir, 'home'),
    ).done;
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /--chat-template "Qwen-Qwen2\.5-7B-Instruct\.jinja@sha256:\w+" in the file, "Qwen-QwQ-32B\.jinja@sha256:\w+" now/,
    );
    const none = await startCli(args(out, []), join(dir, 'home')).done;
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /--chat-template "Qwen-Qwen2\.5-7B-Instruct\.jinja@sha256:\w+" in the file, \(not set\) now/,
    );
    const chat = await startCli(
      args(join(dir, 'O2.jsonl'), ['--chat-template', template(), '--prompt-form', 'chat']),
      join(dir, 'home'),
    ).done;
    expect(chat.code).toBe(2);
    expect(chat.stderr).toMatch(/--prompt-form chat/);
  });
});
