import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import type { CachedModel } from '../../src/models/cache.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { createModel, parseModelSpec } from '../../src/models/spec.js';
import { startFlakyServer } from '../support/flaky-server.js';

const dir = mkdtempSync(join(tmpdir(), 'stepwise-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('model specs', () => {
  it('parses openai, gguf and sim specs and rejects the rest', () => {
    expect(parseModelSpec('openai:Qwen/Qwen2.5-7B:latest')).toEqual({
      backend: 'openai',
      model: 'Qwen/Qwen2.5-7B:latest',
    });
    expect(parseModelSpec('gguf:./m.gguf')).toEqual({ backend: 'gguf', model: './m.gguf' });
    expect(parseModelSpec('sim')).toEqual({ backend: 'sim', spec: 'sim' });
    expect(parseModelSpec('sim?step_error=0.2')).toEqual({ backend: 'sim', spec: 'sim?step_error=0.2' });
    expect(parseModelSpec('sim:policy')).toEqual({ backend: 'sim', spec: 'sim:policy' });
    expect(() => parseModelSpec('openai:')).toThrow(UsageError);
    expect(() => parseModelSpec('claude:x')).toThrow(/unknown model spec/);
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
      expect(server.requests).toHaveLength(1);
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
});
