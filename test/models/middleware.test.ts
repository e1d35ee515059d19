import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CostLedger } from '../../src/core/cost.js';
import type { GenerateResult } from '../../src/core/model.js';
import { innerModel, type ModelMiddleware, middlewareOf, wrapModel } from '../../src/models/middleware.js';
import { createProviderRegistry } from '../../src/models/registry.js';
import { isSimulatedModel, provenanceMiddleware, worldOfModel } from '../../src/models/simulated.js';
import { constantProvider } from '../fixtures/backends/constant-provider.js';
import { scriptedModel } from '../support/scripted-model.js';
import { SRC, sourceFiles } from '../support/source-code.js';

/** A middleware that writes its name into a log on the way in and on the way out. */
function tracer(name: string, log: string[]): ModelMiddleware {
  return {
    name,
    async generate({ request, options }, next) {
      log.push(`${name}>`);
      const r = await next({ ...request, stop: [...(request.stop ?? []), name] }, options);
      log.push(`<${name}`);
      return r;
    },
  };
}

describe('model middleware', () => {
  it('wrapModel: the first middleware is outermost, each sees what the one outside it passed on', async () => {
    const log: string[] = [];
    const model = scriptedModel((r) => [{ text: (r.stop ?? []).join(',') }]);
    const wrapped = wrapModel(model, [tracer('a', log), tracer('b', log)]);
    const r = await wrapped.generate({ prompt: 'x' });
    expect(log).toEqual(['a>', 'b>', '<b', '<a']);
    expect(r.samples[0]!.text).toBe('a,b');
    // Wrapping again adds outside, over the same inner model.
    const again = wrapModel(wrapped, tracer('c', log));
    expect(innerModel(again)).toBe(model);
    expect(middlewareOf(again).map((m) => m.name)).toEqual(['c', 'a', 'b']);
    expect(again.modelId).toBe(model.modelId);
  });

  it('one warning sink: each distinct warning of a model reaches it once, through the registry', async () => {
    let calls = 0;
    const warner = {
      ...constantProvider,
      create: async (...args: Parameters<typeof constantProvider.create>) => {
        const m = await constantProvider.create(...args);
        return {
          ...m,
          async generate(request: Parameters<typeof m.generate>[0]): Promise<GenerateResult> {
            calls++;
            const r = await m.generate(request);
            return {
              ...r,
              warnings: [
                { type: 'unsupported-setting', feature: 'n', details: 'n sent as separate requests' },
                ...(calls > 1 ? [{ type: 'other' as const, feature: 'x', details: 'second' }] : []),
              ],
            };
          },
        };
      },
    };
    const registry = createProviderRegistry({ warner });
    const said: string[] = [];
    const model = await registry.languageModel('warner:1', { onWarning: (m) => said.push(m) });
    await model.generate({ prompt: 'x' });
    await model.generate({ prompt: 'x' });
    await model.generate({ prompt: 'x' });
    expect(said).toEqual(['n sent as separate requests', 'second']);
    // Without a sink the warnings stay in the results: nothing is printed by the backend itself.
    const quiet = await registry.languageModel('warner:1');
    expect((await quiet.generate({ prompt: 'x' })).warnings).toHaveLength(2);
  });

  it('provenance: a marked reply is noticed; isSimulatedModel and the world read what the model is', async () => {
    let marked = 0;
    const model = scriptedModel((_r, i) => [{ text: 't', ...(i === 1 ? { simulated: true as const } : {}) }]);
    const watched = wrapModel(
      model,
      provenanceMiddleware(() => marked++),
    );
    await watched.generate({ prompt: 'x' });
    expect(marked).toBe(0);
    await watched.generate({ prompt: 'x' });
    expect(marked).toBe(1);
    expect(isSimulatedModel(model)).toBe(false);
    expect(isSimulatedModel(scriptedModel(() => [], { modelId: 'sim?step_error=0.2' }))).toBe(true);
    expect(isSimulatedModel(wrapModel(model, [], { world: 'sim' }))).toBe(true);
    expect(worldOfModel(wrapModel(model, [], { world: 'tiny' }))).toBe('tiny');
    expect(worldOfModel(model)).toBe('real');
  });

  it('the cost ledger carries the world of the work: the least real of what it recorded', () => {
    const ledger = new CostLedger();
    expect(ledger.world).toBeUndefined();
    ledger.record('policy', { promptTokens: 1, completionTokens: 2 }, 'real');
    expect(ledger.world).toBe('real');
    ledger.add(new CostLedger().snapshot(), 'tiny');
    expect([ledger.world, ledger.simulated]).toEqual(['tiny', false]);
    ledger.saw('sim');
    expect([ledger.world, ledger.simulated, ledger.allWorlds]).toEqual([
      'sim',
      true,
      ['sim', 'tiny', 'real'],
    ]);
    // The cost itself keeps its shape (rows that print it are unchanged).
    expect(Object.keys(ledger.snapshot())).toEqual(['policy', 'judge']);
  });
});

describe('one route, one format for warnings', () => {
  it('no file but src/cli/warn.ts writes a "warning:" line itself', () => {
    const writers = sourceFiles()
      .filter((f) => !f.endsWith(join('cli', 'warn.ts')))
      .filter((f) => /stderr\.write\(\s*`(?:stepwise: )?warning: /.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f));
    expect(writers).toEqual([]);
  });
});
