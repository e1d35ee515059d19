import { UsageError } from '../core/errors.js';
import { createGgufModel } from './gguf.js';
import { OpenAIModel } from './openai.js';
import type { ModelProvider } from './registry.js';

/** `openai:<model>`: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, the sim server). */
export const openaiProvider: ModelProvider = {
  name: 'openai',
  usage: 'openai:<model>',
  cached: true,
  batch: true,
  create(spec, options) {
    if (spec.id === '')
      throw new UsageError(`model spec "${spec.spec}" names no model: expected openai:<model>`);
    const baseUrl = options.baseUrl ?? process.env.OPENAI_BASE_URL;
    if (!baseUrl)
      throw new UsageError(
        `model "${spec.spec}" needs a server: pass --base-url http://HOST:PORT/v1 or set OPENAI_BASE_URL`,
      );
    return new OpenAIModel({
      model: spec.id,
      baseUrl,
      apiKey: options.apiKey,
      concurrency: options.concurrency,
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      onWarning: options.onWarning,
      batch: options.batch,
    });
  },
};

/** `gguf:<path or hf: URI>`: a local GGUF file run in process by node-llama-cpp. */
export const ggufProvider: ModelProvider = {
  name: 'gguf',
  usage: 'gguf:<path or hf: URI>',
  cached: true,
  create(spec, options) {
    if (spec.id === '')
      throw new UsageError(`model spec "${spec.spec}" names no GGUF file: expected gguf:<path or hf: URI>`);
    return createGgufModel({ model: spec.id, threads: options.threads });
  },
};
