/**
 * The model backends stepwise ships with — `openai`, `gguf` and `sim` — as one registry value.
 * The CLI (src/cli/providers.ts) and the library entry build it here and hand it down; methods
 * never do (they are handed a model, or a registry).
 */
import { ggufProvider, openaiProvider } from '../models/providers.js';
import { createProviderRegistry, type ProviderRegistry } from '../models/registry.js';
import { PROMPT_READERS } from '../prompts/readers.js';
import { createSimProvider } from '../sim/provider.js';

/** The shipped backends (the sim reads requests through the prompts' readers, handed to it here). */
export const DEFAULT_PROVIDERS = {
  openai: openaiProvider,
  gguf: ggufProvider,
  sim: createSimProvider(PROMPT_READERS),
};

/** A registry of the shipped backends. */
export function createDefaultRegistry(): ProviderRegistry {
  return createProviderRegistry(DEFAULT_PROVIDERS);
}
