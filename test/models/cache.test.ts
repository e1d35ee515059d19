import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GenerateRequest, LanguageModel } from '../../src/core/model.js';
import { canonicalJson, generateKeyPrefix, withCache } from '../../src/models/cache.js';
import { deriveSeed } from '../../src/models/seeds.js';
import { openStore } from '../../src/store/db.js';
import { extractAnswer } from '../../src/verify/extract.js';
import { scriptedModel } from '../support/scripted-model.js';
import { tempDir } from '../support/temp.js';

/** A counting fake backend (the one recording mock model): sample i of a call is `${seed}:${i}`. */
function fakeModel(): LanguageModel & { calls: GenerateRequest[] } {
  const model = scriptedModel(
    (request) =>
      Array.from({ length: request.n ?? 1 }, (_, i) => ({
        text: `${request.seed}:${i}`,
        completionTokens: 3,
      })),
    {
      provider: 'fake',
      modelId: 'f',
      capabilities: { logprobs: false, score: true, pooling: true },
      promptTokens: () => 5,
      async score(prefix, continuation) {
        model.requests.push({ prompt: prefix + continuation });
        return { logprob: -2, tokens: [], usage: { calls: 1, promptTokens: 2, completionTokens: 0 } };
      },
      async pool(input) {
        model.requests.push({ prompt: input });
        return { data: [[0.1, 0.9]], usage: { calls: 1, promptTokens: 2, completionTokens: 0 } };
      },
    },
  );
  return Object.assign(model, { calls: model.requests });
}

const dir = tempDir('stepwise-cache-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('withCache', () => {
  it('serves a repeated request from the store with zero usage', async () => {
    const inner = fakeModel();
    const m = withCache(inner, openStore(':memory:'));
    const req = { prompt: 'p', n: 3, seed: 9, maxTokens: 10 };
    const a = await m.generate(req);
    const b = await m.generate({ maxTokens: 10, seed: 9, n: 3, prompt: 'p' });
    expect(inner.calls).toHaveLength(1);
    expect(b.cached).toBe(true);
    expect(b.usage).toEqual({ calls: 0, promptTokens: 0, completionTokens: 0 });
    expect(b.samples).toEqual(a.samples);
    expect(m.cacheStats()).toEqual({ hits: 3, misses: 3, calls: 2, cachedCalls: 1 });
  });

  it('never answers for another origin: same model name and request behind another server is a miss', async () => {
    const db = openStore(':memory:');
    const a = fakeModel();
    const b = fakeModel();
    const at = withCache(Object.assign(a, { origin: 'http://127.0.0.1:1111/v1' }), db);
    const elsewhere = withCache(Object.assign(b, { origin: 'http://127.0.0.1:2222/v1' }), db);
    const req = { prompt: 'p', n: 2, seed: 1, maxTokens: 10 };
    await at.generate(req);
    const other = await elsewhere.generate(req);
    expect(other.cached).toBe(false);
    expect(b.calls).toHaveLength(1);
    expect(elsewhere.cacheStats()).toEqual({ hits: 0, misses: 2, calls: 1, cachedCalls: 0 });
    await at.score!('x', 'y');
    await elsewhere.score!('x', 'y');
    expect(elsewhere.cacheStats().cachedCalls).toBe(0);
    // The same origin again is a hit.
    expect((await at.generate(req)).cached).toBe(true);
    expect(generateKeyPrefix('openai', 'm', req, 'u1')).not.toBe(generateKeyPrefix('openai', 'm', req, 'u2'));
  });

  it('requests only the missing samples, with the seed of their block', async () => {
    const inner = fakeModel();
    const m = withCache(inner, openStore(':memory:'));
    await m.generate({ prompt: 'p', n: 2, seed: 4 });
    const more = await m.generate({ prompt: 'p', n: 5, seed: 4 });
    expect(inner.calls).toHaveLength(2);
    expect(inner.calls[1]).toMatchObject({ n: 3, seed: deriveSeed(4, 2) });
    expect(more.samples.map((s) => s.text)).toEqual([
      '4:0',
      '4:1',
      `${deriveSeed(4, 2)}:0`,
      `${deriveSeed(4, 2)}:1`,
      `${deriveSeed(4, 2)}:2`,
    ]);
    const fewer = await m.generate({ prompt: 'p', n: 1, seed: 4 });
    expect(inner.calls).toHaveLength(2);
    expect(fewer.samples.map((s) => s.text)).toEqual(['4:0']);
  });

  it('keys on every request field and the model, not on n', () => {
    const base = { prompt: 'p', seed: 1, maxTokens: 5 };
    const k = generateKeyPrefix('openai', 'm', base);
    expect(generateKeyPrefix('openai', 'm', { ...base, n: 8 })).toBe(k);
    expect(generateKeyPrefix('openai', 'm', { maxTokens: 5, seed: 1, prompt: 'p' })).toBe(k);
    expect(generateKeyPrefix('openai', 'm2', base)).not.toBe(k);
    expect(generateKeyPrefix('gguf', 'm', base)).not.toBe(k);
    expect(generateKeyPrefix('openai', 'm', { ...base, seed: 2 })).not.toBe(k);
    expect(generateKeyPrefix('openai', 'm', { ...base, extra: { top_k: 1 } })).not.toBe(k);
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] })).toBe('{"a":[1,{"d":2}],"b":1}');
  });

  it('bypasses the cache with noCache and caches score and pool', async () => {
    const inner = fakeModel();
    const m = withCache(inner, openStore(':memory:'));
    await m.generate({ prompt: 'p' });
    await m.generate({ prompt: 'p' }, { noCache: true });
    expect(inner.calls).toHaveLength(2);
    await m.score!('a', 'b');
    expect((await m.score!('a', 'b')).logprob).toBe(-2);
    await m.pool!('x');
    expect((await m.pool!('x')).data).toEqual([[0.1, 0.9]]);
    expect(inner.calls).toHaveLength(4);
  });

  it('a response is durable before the caller sees it: a SIGKILL right after loses nothing', async () => {
    const store = join(dir, 'kill.sqlite');
    // A child process caches one response, prints, and is killed immediately after.
    const script = `
      import { withCache } from '${new URL('../../src/models/cache.ts', import.meta.url).pathname}';
      import { openStore } from '${new URL('../../src/store/db.ts', import.meta.url).pathname}';
      const inner = { specificationVersion: 'v1', provider: 'fake', modelId: 'f', capabilities: {},
        async generate(r) { return { samples: [{ text: 'kept', finishReason: 'stop', completionTokens: 1 }], usage: { calls: 1, promptTokens: 1, completionTokens: 1 }, warnings: [] }; } };
      const m = withCache(inner, openStore(${JSON.stringify(store)}));
      await m.generate({ prompt: 'durable' });
      process.kill(process.pid, 'SIGKILL');
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url).pathname,
      encoding: 'utf8',
    });
    expect(r.signal).toBe('SIGKILL');
    const inner = fakeModel();
    const m = withCache(inner, openStore(store));
    const again = await m.generate({ prompt: 'durable' });
    expect(inner.calls).toHaveLength(0);
    expect(again.samples[0].text).toBe('kept');
  });
});

describe('cache size and --cache verdicts', () => {
  /** A backend whose rollouts read like reasoning: ~450 characters each, a boxed answer at the end. */
  function wordyModel(): LanguageModel & { calls: number } {
    const m = fakeModel() as unknown as LanguageModel & { calls: number };
    m.calls = 0;
    m.generate = async (request) => {
      m.calls++;
      const n = request.n ?? 1;
      return {
        samples: Array.from({ length: n }, (_, i) => {
          const v = ((request.seed ?? 0) * 31 + i * 7) % 97;
          const steps = Array.from(
            { length: 6 },
            (_, k) =>
              `Step ${k + 1}: add ${v + k} to the running total. ${v * k} + ${v + k} = ${v * k + v + k}.`,
          );
          return {
            text: `${steps.join('\n\n')}\n\nThe answer is \\boxed{${v}}.`,
            finishReason: i === 1 ? ('length' as const) : ('stop' as const),
            completionTokens: 120 + i,
          };
        }),
        usage: { calls: 1, promptTokens: 5, completionTokens: 480 },
        warnings: [],
      };
    };
    return m;
  }

  const tableBytes = (db: ReturnType<typeof openStore>) =>
    (db.prepare('SELECT SUM(length(key) + length(value) + 8) AS b FROM samples').get() as { b: number }).b;

  it('stores a request in one compressed row: far fewer bytes than the JSON of its samples', async () => {
    const db = openStore(':memory:');
    const m = withCache(wordyModel(), db);
    let jsonBytes = 0;
    for (let s = 0; s < 100; s++) {
      const r = await m.generate({ prompt: `problem ${s}`, n: 4, seed: s, maxTokens: 512 });
      jsonBytes += r.samples.reduce((a, x) => a + JSON.stringify(x).length, 0);
    }
    expect((db.prepare('SELECT COUNT(*) AS c FROM samples').get() as { c: number }).c).toBe(100);
    const perRollout = tableBytes(db) / 400;
    expect(perRollout).toBeLessThan((jsonBytes / 400) * 0.4);
    // Everything comes back exactly, including the finish reason and token counts.
    const again = await m.generate({ prompt: 'problem 7', n: 4, seed: 7, maxTokens: 512 });
    expect(again.cached).toBe(true);
    expect(again.samples[1]).toMatchObject({ finishReason: 'length', completionTokens: 121 });
    expect(again.samples[0].text).toMatch(/^Step 1: add .*\\boxed\{\d+\}\.$/s);
  });

  it('verdicts keep answer, finish and tokens: same verdicts, smaller rows, never served to a full run', async () => {
    const dbFull = openStore(':memory:');
    const dbVerdicts = openStore(':memory:');
    const full = withCache(wordyModel(), dbFull);
    const inner = wordyModel();
    const verdicts = withCache(inner, dbVerdicts, { mode: 'verdicts' });
    for (let s = 0; s < 50; s++) {
      const req = { prompt: `problem ${s}`, n: 4, seed: s, maxTokens: 512 };
      const a = await full.generate(req);
      const b = await verdicts.generate(req);
      expect(b.samples.map((x) => extractAnswer(x.text))).toEqual(
        a.samples.map((x) => extractAnswer(x.text)),
      );
      expect(b.samples.map((x) => [x.finishReason, x.completionTokens])).toEqual(
        a.samples.map((x) => [x.finishReason, x.completionTokens]),
      );
    }
    expect(tableBytes(dbVerdicts)).toBeLessThan(tableBytes(dbFull) / 3);
    const hit = await verdicts.generate({ prompt: 'problem 3', n: 4, seed: 3, maxTokens: 512 });
    expect(hit.cached).toBe(true);
    expect(hit.samples[0].text).toMatch(/^\\boxed\{\d+\}$/);
    // A full-mode run over a verdicts store cannot use texts it does not have: it asks again.
    const before = inner.calls;
    const fullOverVerdicts = withCache(inner, dbVerdicts);
    const r = await fullOverVerdicts.generate({ prompt: 'problem 3', n: 4, seed: 3, maxTokens: 512 });
    expect(r.cached).toBe(false);
    expect(inner.calls).toBe(before + 1);
    expect(r.samples[0].text).toMatch(/^Step 1/);
  });

  it('reads rows of the old one-row-per-sample cache table', async () => {
    const db = openStore(':memory:');
    const inner = fakeModel();
    const req = { prompt: 'old', n: 2, seed: 4 };
    const prefix = generateKeyPrefix('fake', 'f', req);
    const ins = db.prepare('INSERT INTO cache (key, value, created_at) VALUES (?, ?, 0)');
    ins.run(`${prefix}0`, JSON.stringify({ text: 'old0', finishReason: 'stop', completionTokens: 1 }));
    ins.run(`${prefix}1`, JSON.stringify({ text: 'old1', finishReason: 'stop', completionTokens: 1 }));
    const r = await withCache(inner, db).generate(req);
    expect(r.cached).toBe(true);
    expect(r.samples.map((s) => s.text)).toEqual(['old0', 'old1']);
    expect(inner.calls).toHaveLength(0);
  });
});
