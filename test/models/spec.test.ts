import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UsageError } from '../../src/core/errors.js';
import type { CachedModel } from '../../src/models/cache.js';
import { cacheStatsOf } from '../../src/models/cache.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { createProviderRegistry, type ModelProvider, type ModelSpec } from '../../src/models/registry.js';
import { DEFAULT_PROVIDERS } from '../../src/providers/default.js';
import { startFlakyServer } from '../support/flaky-server.js';
import { providers } from '../support/providers.js';
import { scriptedModel } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';

const dir = tempDir('stepwise-spec-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('model specs', () => {
  it('parses a spec into the provider named before the first ":", "?" or "[", and rejects unknown providers', async () => {
    expect(providers.parse('openai:Qwen/Qwen2.5-7B:latest')).toEqual({
      provider: 'openai',
      id: 'Qwen/Qwen2.5-7B:latest',
      spec: 'openai:Qwen/Qwen2.5-7B:latest',
    });
    expect(providers.parse('gguf:./m.gguf')).toMatchObject({ provider: 'gguf', id: './m.gguf' });
    expect(providers.parse('sim')).toEqual({ provider: 'sim', id: '', spec: 'sim' });
    expect(providers.parse('sim?step_error=0.2')).toEqual({
      provider: 'sim',
      id: '',
      spec: 'sim?step_error=0.2',
    });
    expect(providers.parse('sim:policy')).toEqual({ provider: 'sim', id: 'policy', spec: 'sim:policy' });
    await expect(providers.languageModel('openai:')).rejects.toThrow(UsageError);
    await expect(providers.languageModel('gguf:')).rejects.toThrow(/names no GGUF file/);
    expect(() => providers.parse('claude:x')).toThrow(UsageError);
    expect(() => providers.parse('claude:x')).toThrow(
      /unknown model spec "claude:x": expected openai:<model>, or gguf:/,
    );
  });

  it('looks a spec up in the registry: a registered provider is used, its models cached only when it says so', async () => {
    const made: ModelSpec[] = [];
    const echo = (cached: boolean): ModelProvider => ({
      usage: 'echo-test:<text>',
      description: 'echoes its id',
      settings: z.object({}),
      cached,
      create(spec) {
        made.push(spec);
        return scriptedModel(() => [{ text: spec.id, completionTokens: 1 }], {
          provider: 'echo-test',
          modelId: spec.id,
        });
      },
    });
    let registry = createProviderRegistry({ ...DEFAULT_PROVIDERS, 'echo-test': echo(false) });
    expect(registry.names()).toEqual(['echo-test', 'gguf', 'openai', 'sim']);
    // A value: the test process's registry does not know what another registry holds.
    expect(() => providers.parse('echo-test:hello')).toThrow(/unknown model spec/);
    const raw = await registry.languageModel('echo-test:hello');
    expect(made).toEqual([{ provider: 'echo-test', id: 'hello', spec: 'echo-test:hello' }]);
    expect((await raw.generate({ prompt: 'x' })).samples[0]!.text).toBe('hello');
    expect((raw as Partial<CachedModel>).inner).toBeUndefined();
    registry = createProviderRegistry({ 'echo-test': echo(true) });
    const cached = (await registry.languageModel('echo-test:hi', {
      storePath: join(dir, 'echo.sqlite'),
    })) as CachedModel;
    expect(cached.inner.modelId).toBe('hi');
    await cached.generate({ prompt: 'x' });
    await cached.generate({ prompt: 'x' });
    expect(cacheStatsOf(cached)).toMatchObject({ calls: 2, cachedCalls: 1 });
    await expect(registry.languageModel('echo-test:hi', { batch: {} as never })).rejects.toThrow(
      /batch files/,
    );
    registry = createProviderRegistry({
      'echo-test': { ...echo(false), create: () => ({ specificationVersion: 'v2' }) as never },
    });
    await expect(registry.languageModel('echo-test:x')).rejects.toThrow(
      /specification v2; stepwise speaks v1/,
    );
    expect(() => createProviderRegistry({ Echo: echo(false) })).toThrow(/lowercase/);
  });

  it('builds a cached OpenAI model from --base-url or OPENAI_BASE_URL, and sim in process', async () => {
    const saved = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
    try {
      await expect(providers.languageModel('openai:m')).rejects.toThrow(/--base-url/);
    } finally {
      if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
    }
    const server = await startFlakyServer({ rate500: 0, rate429: 0, dropRate: 0, delayRate: 0 });
    try {
      const m = (await providers.languageModel('openai:m', {
        settings: { baseUrl: server.url },
        storePath: join(dir, 'store.sqlite'),
      })) as CachedModel;
      expect(m.inner).toBeInstanceOf(OpenAIModel);
      await m.generate({ prompt: 'x', n: 2, maxTokens: 4 });
      await m.generate({ prompt: 'x', n: 2, maxTokens: 4 });
      // One completion; `/v1/models` is asked once for what the cache key holds of the server.
      expect(server.requests.filter((r) => r.path !== '/v1/models')).toHaveLength(1);
      expect(server.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
      await m.close?.();
      const raw = await providers.languageModel('openai:m', {
        settings: { baseUrl: server.url },
        noCache: true,
      });
      expect(raw).toBeInstanceOf(OpenAIModel);
      await raw.close?.();
    } finally {
      await server.close();
    }
    const sim = await providers.languageModel('sim?step_error=0.2');
    expect(sim.provider).toBe('sim');
  });

  it('works out of the box from the library entry: createDefaultRegistry() holds openai, gguf and sim', () => {
    const entry = new URL('../../dist/index.js', import.meta.url).href;
    const script = `const s = await import(${JSON.stringify(entry)}); const r = s.createDefaultRegistry(); const m = await r.languageModel('sim'); console.log(m.provider, r.names().join(','));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim()).toBe('sim gguf,openai,sim');
  });

  it("reads a spec's query against its provider's settings schema, errors naming the key", async () => {
    expect(providers.settingsOf('gguf:./m.gguf?threads=2')).toEqual({ threads: 2 });
    expect(() => providers.settingsOf('gguf:./m.gguf?thread=2')).toThrow(
      /model spec "gguf:.\/m.gguf\?thread=2": unknown option "thread" of gguf \(known: threads\)/,
    );
    expect(() => providers.settingsOf('gguf:./m.gguf?threads=0')).toThrow(
      /threads must be a positive integer \(got 0\)/,
    );
    expect(() => providers.settingsOf('gguf:./m.gguf?threads=many')).toThrow(/threads: many is not a number/);
    // Defaults filled in; a given setting (a flag) beats the spec; other backends' settings are ignored.
    expect(providers.settingsOf('openai:m?timeout_ms=5000', { timeoutMs: 7000, threads: 3 })).toEqual({
      concurrency: 64,
      timeoutMs: 7000,
      maxRetries: 8,
    });
    expect(providers.settingsOf('openai:m?timeout_ms=5000')).toMatchObject({ timeoutMs: 5000 });
    // The openai backend's served name keeps the rest of its query (the sim server reads it).
    expect(providers.settingsOf('openai:sim?step_error=0.2&max_retries=1')).toMatchObject({ maxRetries: 1 });
    // A server URL or key in a spec would be recorded with the results.
    expect(() => providers.settingsOf('openai:m?base_url=http://h/v1')).toThrow(
      /may not be written in a model spec.*--base-url/,
    );
    expect(() => providers.settingsOf('sim?step_eror=0.2')).toThrow(/unknown option "step_eror" of sim/);
    expect(() => providers.settingsOf('sim?step_error=2')).toThrow(
      /step_error must be a number between 0 and 1 \(got 2\)/,
    );
    expect(providers.settingsOf('sim?sens=0.7&prm=step')).toMatchObject({ sensitivity: 0.7, prm: 'step' });
    expect(() => providers.settingsOf('sim?prm=magic')).toThrow(/prm must be value, step or oracle/);
  });

  it('knows the world of a spec: sim, the tiny networks under models/tiny, real otherwise', async () => {
    expect(providers.worldOf('sim?step_error=0.2')).toBe('sim');
    expect(providers.worldOf('gguf:models/tiny/policy.gguf')).toBe('tiny');
    expect(providers.worldOf('gguf:/data/qwen.gguf')).toBe('real');
    expect(providers.worldOf('openai:Qwen')).toBe('real');
    expect((await providers.languageModel('sim')).world).toBe('sim');
  });
});
