import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { setting, settingFields } from '../../src/core/settings-schema.js';
import { DEFAULT_SEARCH_CONFIG, SEARCH_SETTINGS, STRATEGIES } from '../../src/search/registry.js';
import { SHARED_SEARCH_SETTINGS } from '../../src/search/settings.js';
import { joinStrategySettings } from '../../src/search/strategy-settings.js';

describe('search settings: the shared schema and one per strategy, joined by the registry', () => {
  it("every strategy's own field is a flag whose help names the strategy; its budget is a setting", () => {
    const fields = new Map(settingFields(SEARCH_SETTINGS).map((f) => [f.key, f]));
    for (const [name, info] of Object.entries(STRATEGIES)) {
      for (const own of settingFields(info.settings))
        expect(fields.get(own.key)?.meta.help, `${name} ${own.key}`).toBe(`${name}: ${own.meta.help}`);
      if ('budget' in info) expect(fields.has(info.budget), `${name} budget ${info.budget}`).toBe(true);
    }
    for (const key of Object.keys(SHARED_SEARCH_SETTINGS.shape)) expect(fields.has(key)).toBe(true);
    // The defaults the library runs with are the schemas'.
    expect(DEFAULT_SEARCH_CONFIG).toMatchObject({ n: 8, beamWidth: 4, childrenPerNode: 5, maxAttempts: 5 });
    expect(DEFAULT_SEARCH_CONFIG.stepSeparator).toBe('\n\n');
  });

  it('a setting two schemas declare is refused, naming both: it belongs in the shared schema', () => {
    const twice = (key: string) => ({
      settings: z.object({ [key]: setting(z.number().default(1), { help: 'again' }) }),
    });
    expect(() => joinStrategySettings({ a: twice('depth'), b: twice('depth') })).toThrow(
      /strategy b declares "depth", which strategy a declares too/,
    );
    expect(() => joinStrategySettings({ a: twice('n') })).toThrow(/"n", which the shared settings declares/);
  });
});
