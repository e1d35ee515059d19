/**
 * The model backends stepwise ships with — `openai`, `gguf` and `sim` — in one place. The CLI and
 * the library entry call {@link registerDefaultProviders}; methods never do (they are handed a
 * model, or call `createModel`, which only knows the registry).
 */
import { ggufProvider, openaiProvider } from '../models/providers.js';
import { registerProvider } from '../models/registry.js';
import { PROMPT_READERS } from '../prompts/readers.js';
import { createSimProvider } from '../sim/provider.js';

/** Register the shipped backends (the sim reads requests through the prompts' readers, handed to it here). */
export function registerDefaultProviders(): void {
  for (const provider of [openaiProvider, ggufProvider, createSimProvider(PROMPT_READERS)])
    registerProvider(provider);
}
