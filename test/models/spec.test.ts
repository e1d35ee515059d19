import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import type { CachedModel } from '../../src/models/cache.js';
import { OpenAIModel } from '../../src/models/openai.js';
import {
  createModel,
  type ModelProvider,
  type ModelSpec,
  parseModelSpec,
  providerNames,
  registerProvider,
} from '../../src/models/registry.js';
import { startFlakyServer } from '../support/flaky-server.js';
import { scriptedModel } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';

const dir = tempDir('stepwise-spec-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('model specs', () => {
  it('parses a spec into the provider named before the first ":", "?" or "[", and rejects unknown providers', async () => {
    expect(parseModelSpec('openai:Qwen/Qwen2.5-7B:latest')).toEqual({
      provider: 'openai',
      id: 'Qwen/Qwen2.5-7B:latest',
      spec: 'openai:Qwen/Qwen2.5-7B:latest',
    });
    expect(parseModelSpec('gguf:./m.gguf')).toMatchObject({ provider: 'gguf', id: './m.gguf' });
    expect(parseModelSpec('sim')).toEqual({ provider: 'sim', id: '', spec: 'sim' });
    expect(parseModelSpec('sim?step_error=0.2')).toEqual({
      provider: 'sim',
      id: '',
      spec: 'sim?step_error=0.2',
    });
    expect(parseModelSpec('sim:policy')).toEqual({ provider: 'sim', id: 'policy', spec: 'sim:policy' });
    await expect(createModel('openai:')).rejects.toThrow(UsageError);
    await expect(createModel('gguf:')).rejects.toThrow(/names no GGUF file/);
    expect(() => parseModelSpec('claude:x')).toThrow(UsageError);
    expect(() => parseModelSpec('claude:x')).toThrow(
      /unknown model spec "claude:x": expected openai:<model>, or gguf:/,
    );
  });

  it('looks a spec up in the registry: a registered provider is used, its models cached only when it says so', async () => {
    const made: ModelSpec[] = [];
    const echo = (cached: boolean): ModelProvider => ({
      name: 'echo-test',
      usage: 'echo-test:<text>',
      cached,
      create(spec) {
        made.push(spec);
        return scriptedModel(() => [{ text: spec.id, completionTokens: 1 }], {
          provider: 'echo-test',
          modelId: spec.id,
        });
      },
    });
    registerProvider(echo(false));
    expect(providerNames()).toContain('echo-test');
    const raw = await createModel('echo-test:hello');
    expect(made).toEqual([{ provider: 'echo-test', id: 'hello', spec: 'echo-test:hello' }]);
    expect((await raw.generate({ prompt: 'x' })).samples[0]!.text).toBe('hello');
    expect((raw as Partial<CachedModel>).inner).toBeUndefined();
    registerProvider(echo(true));
    const cached = (await createModel('echo-test:hi', {
      storePath: join(dir, 'echo.sqlite'),
    })) as CachedModel;
    expect(cached.inner.modelId).toBe('hi');
    await expect(createModel('echo-test:hi', { batch: {} as never })).rejects.toThrow(/batch files/);
    registerProvider({ ...echo(false), create: () => ({ specificationVersion: 'v2' }) as never });
    await expect(createModel('echo-test:x')).rejects.toThrow(/specification v2; stepwise speaks v1/);
  });

  it('builds a cached OpenAI model from --base-url or OPENAI_BASE_URL, and sim in process', async () => {
    const saved = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
    try {
      await expect(createModel('openai:m')).rejects.toThrow(/--base-url/);
    } finally {
      if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
    }
    const server = await startFlakyServer({ rate500: 0, rate429: 0, dropRate: 0, delayRate: 0 });
    try {
      const m = (await createModel('openai:m', {
        baseUrl: server.url,
        storePath: join(dir, 'store.sqlite'),
      })) as CachedModel;
      expect(m.inner).toBeInstanceOf(OpenAIModel);
      await m.generate({ prompt: 'x', n: 2, maxTokens: 4 });
      await m.generate({ prompt: 'x', n: 2, maxTokens: 4 });
      // One completion; `/v1/models` is asked once for what the cache key holds of the server.
      expect(server.requests.filter((r) => r.path !== '/v1/models')).toHaveLength(1);
      expect(server.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
      await m.close?.();
      const raw = await createModel('openai:m', { baseUrl: server.url, noCache: true });
      expect(raw).toBeInstanceOf(OpenAIModel);
      await raw.close?.();
    } finally {
      await server.close();
    }
    const sim = await createModel('sim?step_error=0.2');
    expect(sim.provider).toBe('sim');
  });

  it('works out of the box from the library entry: importing stepwise registers openai, gguf and sim', () => {
    const entry = new URL('../../dist/index.js', import.meta.url).href;
    const script = `const s = await import(${JSON.stringify(entry)}); const m = await s.createModel('sim'); console.log(m.provider, s.providerNames().join(','));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim()).toBe('sim gguf,openai,sim');
  });
});
