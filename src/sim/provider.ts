import type { ModelProvider } from '../models/registry.js';
import type { PromptReaders } from '../prompts/protocol.js';
import { createSimModel } from './model.js';

/**
 * `sim[:name][?key=value&…]`: the simulated world in process, reading requests with `readers`
 * (the composition root hands it `PROMPT_READERS`). Not cached: a call costs less than a cache
 * lookup.
 */
export function createSimProvider(readers: PromptReaders): ModelProvider {
  return {
    name: 'sim',
    usage: 'sim[:name][?key=value&…]',
    cached: false,
    create: (spec) => createSimModel(spec.spec, readers),
  };
}
