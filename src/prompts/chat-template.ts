import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Template } from '@huggingface/jinja';
import { UsageError } from '../core/errors.js';

/** A chat message as a chat template reads it. */
export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * A model's own chat template (the Hugging Face Jinja template of its tokenizer), rendered
 * client-side so `/v1/completions` sees exactly the text the model was trained on.
 */
export interface ChatTemplate {
  /** The file it was read from. */
  file: string;
  /** `<file name>@sha256:<first 16 hex digits of the template text>`: what outputs record. */
  id: string;
  render(messages: readonly TemplateMessage[], options?: { addGenerationPrompt?: boolean }): string;
}

interface TokenizerConfig {
  chat_template?: unknown;
  bos_token?: unknown;
  eos_token?: unknown;
}

function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return undefined;
}

/** The template text of a tokenizer_config.json: a string, or the `default` of a named list. */
function templateOfConfig(file: string, config: TokenizerConfig): string {
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t as Array<{ name?: unknown; template?: unknown }>;
    const pick = named.find((x) => x.name === 'default') ?? named[0];
    if (pick && typeof pick.template === 'string') return pick.template;
  }
  throw new UsageError(
    `${file}: no "chat_template" string (or named list with a "default") in this tokenizer config`,
  );
}

/**
 * Read `--chat-template FILE`: a `tokenizer_config.json` (its `chat_template`, and its EOS token
 * for templates that close assistant turns with it) or a bare `.jinja` file.
 *
 * `bos_token` renders as the empty string: the server adds BOS itself when it tokenizes a
 * completion prompt (vLLM, llama.cpp), so rendering it too would send it twice.
 * `enable_thinking` is true: the models' own templates open `<think>` in the generation prompt;
 * the switch that closes it at once is llama.cpp's addition to some copies of them.
 */
export function loadChatTemplate(file: string): ChatTemplate {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--chat-template ${file}: cannot read it (${(e as Error).message})`);
  }
  let source = text;
  let eosToken = '';
  if (file.endsWith('.json')) {
    let config: TokenizerConfig;
    try {
      config = JSON.parse(text) as TokenizerConfig;
    } catch (e) {
      throw new UsageError(`${file}: not valid JSON (${(e as Error).message})`);
    }
    source = templateOfConfig(file, config);
    eosToken = tokenText(config.eos_token) ?? '';
  }
  let template: Template;
  try {
    template = new Template(source);
  } catch (e) {
    throw new UsageError(`${file}: the chat template does not parse (${(e as Error).message})`);
  }
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
  return {
    file,
    id: `${basename(file)}@sha256:${digest}`,
    render(messages, options = {}) {
      try {
        return template.render({
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          add_generation_prompt: options.addGenerationPrompt ?? false,
          bos_token: '',
          eos_token: eosToken,
          enable_thinking: true,
        });
      } catch (e) {
        throw new UsageError(`${file}: rendering the chat template failed (${(e as Error).message})`);
      }
    },
  };
}

/**
 * The raw prompt that continues an assistant turn: the conversation before it rendered with the
 * generation prompt, then the assistant text so far, verbatim. Sampling (empty prefix) and
 * rollouts (a prefix) share this one rendering, so a rollout continues exactly where a sample
 * would have gone on — after a reasoning model's `<think>` too.
 */
export function continueAssistantTurn(
  template: ChatTemplate,
  conversation: readonly TemplateMessage[],
  assistantSoFar: string,
): string {
  return template.render(conversation, { addGenerationPrompt: true }) + assistantSoFar;
}
