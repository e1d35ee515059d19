import type { ModelProvider } from '../models/registry.js';
import { createSimModel } from './model.js';

/**
 * `sim[:name][?key=value&…]`: the simulated world in process. Not cached: a call costs less
 * than a cache lookup.
 */
export const simProvider: ModelProvider = {
  name: 'sim',
  usage: 'sim[:name][?key=value&…]',
  cached: false,
  create: (spec) => createSimModel(spec.spec),
};
