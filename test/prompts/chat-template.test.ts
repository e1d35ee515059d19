import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  continueAssistantTurn,
  loadChatTemplate,
  type TemplateMessage,
} from '../../src/prompts/chat-template.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * Golden renderings of the real templates in ../shared/data/chat-templates (read from there):
 * test/fixtures/chat-templates/golden.json was rendered by Python's jinja2 set up the way
 * transformers' apply_chat_template sets it up — an independent engine, the one the models use.
 */
interface Golden {
  cases: Record<string, { messages: TemplateMessage[]; add_generation_prompt: boolean }>;
  renderings: Record<string, Record<string, string>>;
}
const golden = JSON.parse(
  readFileSync(new URL('../fixtures/chat-templates/golden.json', import.meta.url), 'utf8'),
) as Golden;
const dir = tempDir('stepwise-chat-template-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('chat templates rendered with @huggingface/jinja', () => {
  for (const [file, renderings] of Object.entries(golden.renderings)) {
    it(`${file} renders as the model's own tokenizer would`, () => {
      const t = loadChatTemplate(sharedData(`chat-templates/${file}`));
      for (const [name, c] of Object.entries(golden.cases))
        expect(t.render(c.messages, { addGenerationPrompt: c.add_generation_prompt }), name).toBe(
          renderings[name],
        );
    });
  }

  it('continues the assistant turn: the generation prompt, then the prefix verbatim (after <think> for reasoning models)', () => {
    const user: TemplateMessage[] = [{ role: 'user', content: 'What is 2 + 3?' }];
    const qwen = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));
    expect(continueAssistantTurn(qwen, user, 'First, 2 + 3 = 5.\n\n')).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\nFirst, 2 + 3 = 5.\n\n',
    );
    const r1 = loadChatTemplate(sharedData('chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja'));
    expect(continueAssistantTurn(r1, user, 'Okay, 2 + 3')).toBe(
      '<｜User｜>What is 2 + 3?<｜Assistant｜><think>\nOkay, 2 + 3',
    );
  });

  it('reads a tokenizer_config.json (chat_template string or named list, eos_token object) and names the template by its hash', () => {
    const jinja = readFileSync(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'), 'utf8');
    const a = join(dir, 'tokenizer_config.json');
    writeFileSync(a, JSON.stringify({ chat_template: jinja, eos_token: { content: '<|im_end|>' } }));
    const b = join(dir, 'named.json');
    writeFileSync(
      b,
      JSON.stringify({
        chat_template: [
          { name: 'tool_use', template: 'x' },
          { name: 'default', template: jinja },
        ],
      }),
    );
    const user: TemplateMessage[] = [{ role: 'user', content: 'Hi' }];
    const direct = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));
    expect(loadChatTemplate(a).render(user, { addGenerationPrompt: true })).toBe(
      direct.render(user, { addGenerationPrompt: true }),
    );
    expect(loadChatTemplate(b).render(user)).toBe(direct.render(user));
    expect(loadChatTemplate(a).id.split('@')[1]).toBe(direct.id.split('@')[1]);
    expect(direct.id).toMatch(/^Qwen-Qwen2\.5-7B-Instruct\.jinja@sha256:[0-9a-f]{16}$/);
  });

  it('bad files are usage errors naming the file', () => {
    const noTemplate = join(dir, 'empty.json');
    writeFileSync(noTemplate, '{"bos_token": "<s>"}');
    expect(() => loadChatTemplate(noTemplate)).toThrow(/empty\.json: no "chat_template"/);
    const broken = join(dir, 'broken.jinja');
    writeFileSync(broken, '{% for m in messages %}');
    expect(() => loadChatTemplate(broken)).toThrow(/broken\.jinja: the chat template does not parse/);
    expect(() => loadChatTemplate(join(dir, 'missing.jinja'))).toThrow(/cannot read it/);
  });
});
