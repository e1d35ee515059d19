/**
 * The composition root: registers the model backends stepwise ships with — `openai`, `gguf` and
 * `sim` — with the provider registry. The CLI and the library entry import it; methods never do
 * (they are handed a model, or call `createModel`, which only knows the registry).
 */
import { ggufProvider, openaiProvider } from '../models/providers.js';
import { registerProvider } from '../models/registry.js';
import { PROMPT_READERS } from '../prompts/readers.js';
import { createSimProvider } from '../sim/provider.js';

// The sim reads requests only through the prompts' readers, handed to it here.
for (const provider of [openaiProvider, ggufProvider, createSimProvider(PROMPT_READERS)])
  registerProvider(provider);

export { createModel, registerProvider } from '../models/registry.js';
