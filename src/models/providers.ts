import { resolve, sep } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { setting } from '../core/settings-schema.js';
import { createGgufModel } from './gguf.js';
import { OpenAIModel } from './openai.js';
import type { ModelProvider } from './registry.js';
import { DEFAULT_RETRY_POLICY } from './retry.js';

/** Settings of the `openai` backend. */
export const OPENAI_SETTINGS = z.object({
  baseUrl: setting(z.string().optional(), {
    help: 'the OpenAI-compatible server(s), comma-separated for several endpoints',
    arg: 'url',
    defaultText: 'OPENAI_BASE_URL',
    requirement: 'http(s)://HOST:PORT/v1',
  }),
  apiKey: setting(z.string().optional(), {
    help: 'the API key (a dummy when unset: local servers ignore it)',
    arg: 'key',
    defaultText: 'OPENAI_API_KEY',
    requirement: 'a string',
  }),
  concurrency: setting(z.number().int().min(1).default(64), {
    help: 'requests in flight per endpoint',
    runOnly: true,
  }),
  timeoutMs: setting(z.number().int().min(1).default(600_000), {
    help: 'timeout of one HTTP request in ms (long generations on a busy server are slow)',
    arg: 'ms',
    runOnly: true,
  }),
  maxRetries: setting(z.number().int().min(0).default(DEFAULT_RETRY_POLICY.maxRetries), {
    help: 'retries after a failed attempt',
    runOnly: true,
  }),
});

/** `openai:<model>`: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, the sim server). */
export const openaiProvider: ModelProvider<typeof OPENAI_SETTINGS> = {
  usage: 'openai:<model>',
  description:
    'an OpenAI-compatible server (vLLM, SGLang, llama.cpp `llama-server`, Ollama, hosted APIs, `stepwise sim serve`); `<model>` is the name the server serves',
  settings: OPENAI_SETTINGS,
  // A server URL or key written in a spec would be recorded with every result.
  notInSpec: ['baseUrl', 'apiKey'],
  // The served name may carry its own query (the sim server reads `openai:sim?step_error=0.2`).
  otherQueryKeys: 'model-name',
  cached: true,
  batch: true,
  create(spec, settings, context) {
    if (spec.id === '')
      throw new UsageError(`model spec "${spec.spec}" names no model: expected openai:<model>`);
    const baseUrl = settings.baseUrl ?? process.env.OPENAI_BASE_URL;
    if (!baseUrl)
      throw new UsageError(
        `model "${spec.spec}" needs a server: pass --base-url http://HOST:PORT/v1 or set OPENAI_BASE_URL`,
      );
    return new OpenAIModel({
      model: spec.id,
      baseUrl,
      apiKey: settings.apiKey,
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      batch: context.batch,
    });
  },
};

/** Settings of the `gguf` backend. */
export const GGUF_SETTINGS = z.object({
  threads: setting(z.number().int().min(1).optional(), {
    help: 'CPU threads',
    defaultText: "the machine's cores (1 for files under 64 MB)",
    runOnly: true,
  }),
});

/** The project's tiny networks (models/tiny, docs/tiny.md): a gguf file there is the tiny world. */
const TINY_DIR = `${sep}models${sep}tiny${sep}`;

/** `gguf:<path or hf: URI>`: a local GGUF file run in process by node-llama-cpp. */
export const ggufProvider: ModelProvider<typeof GGUF_SETTINGS> = {
  usage: 'gguf:<path or hf: URI>',
  description:
    'a local GGUF file on CPU via node-llama-cpp (an optional dependency: `npm i node-llama-cpp@3.21.1`)',
  settings: GGUF_SETTINGS,
  cached: true,
  world: (spec) => (resolve(spec.id.replace(/\?.*$/, '')).includes(TINY_DIR) ? 'tiny' : 'real'),
  create(spec, settings) {
    const file = spec.id.replace(/\?.*$/, '');
    if (file === '')
      throw new UsageError(`model spec "${spec.spec}" names no GGUF file: expected gguf:<path or hf: URI>`);
    return createGgufModel({ model: file, threads: settings.threads });
  },
};
