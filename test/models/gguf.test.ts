import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StepwiseError } from '../../src/core/errors.js';
import { createGgufModel, flattenMessages, type GgufModel } from '../../src/models/gguf.js';
import { providers } from '../support/providers.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

const MODEL = sharedData('tiny-gguf/stories260K.gguf');
const BIN = new URL('../../bin/stepwise.js', import.meta.url).pathname;

describe('GGUF backend (stories260K)', () => {
  let model: GgufModel;
  beforeAll(async () => {
    model = await createGgufModel({ model: MODEL, threads: 1, contextSize: 512 });
  });
  afterAll(async () => {
    await model?.close();
  });

  it('generates n samples with per-sample seeds, reproducibly', async () => {
    const req = { prompt: 'Once upon a time', n: 2, maxTokens: 16, seed: 3, temperature: 1 };
    const a = await model.generate(req);
    expect(a.warnings.map((w) => w.details).join(' ')).toMatch(/one after another/);
    const b = await model.generate(req);
    expect(a.samples).toHaveLength(2);
    expect(a.samples.map((s) => s.text)).toEqual(b.samples.map((s) => s.text));
    expect(a.samples[0].text).not.toBe(a.samples[1].text);
    for (const s of a.samples) {
      expect(s.completionTokens).toBeGreaterThan(0);
      expect(s.completionTokens).toBeLessThanOrEqual(16);
    }
    expect(a.usage.calls).toBe(2);
    // The backend says once that it samples sequentially.
    expect(b.warnings.map((w) => w.details).join(' ')).not.toMatch(/one after another/);
  });

  it('without a seed, the samples of one request still differ', async () => {
    const r = await model.generate({ prompt: 'Once upon a time', n: 2, maxTokens: 16, temperature: 1 });
    expect(r.samples[0].text).not.toBe(r.samples[1].text);
  });

  it('stops at a stop string and reports it', async () => {
    const r = await model.generate({
      prompt: 'Once upon a time',
      maxTokens: 48,
      temperature: 0,
      stop: ['.'],
    });
    expect(r.samples[0].finishReason).toBe('stop');
    expect(r.samples[0].stopReason).toBe('.');
    expect(r.samples[0].text).not.toContain('.');
    const cut = await model.generate({ prompt: 'Once upon a time', maxTokens: 3, temperature: 0 });
    expect(cut.samples[0].finishReason).toBe('length');
    expect(cut.samples[0].completionTokens).toBe(3);
  });

  it('scores a continuation: likely text beats unlikely text, log-probs add up', async () => {
    const likely = await model.score('Once upon a time, there was a little', ' girl');
    const unlikely = await model.score('Once upon a time, there was a little', ' spaceship');
    expect(likely.logprob).toBeLessThan(0);
    expect(likely.logprob).toBeGreaterThan(unlikely.logprob);
    const whole = await model.score('Once upon a time', ' there was a girl');
    expect(whole.logprob).toBeCloseTo(
      whole.tokens.reduce((a, t) => a + t.logprob, 0),
      10,
    );
    expect(whole.tokens.map((t) => t.token).join('')).toContain('girl');
  });

  it('renders chat messages as plain text and says so', async () => {
    expect(
      flattenMessages([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Once' },
      ]),
    ).toBe('user: Hi\n\nassistant: Once');
    const r = await model.generate({ messages: [{ role: 'user', content: 'Tell a story' }], maxTokens: 4 });
    expect(r.warnings.map((w) => w.details).join(' ')).toMatch(/plain/);
  });

  it('says how to install node-llama-cpp when it is missing', () => {
    // A resolve hook makes the optional dependency unresolvable, as on an install without it.
    const hook =
      'export async function resolve(s, c, n) { if (s === "node-llama-cpp") { const e = new Error("Cannot find package node-llama-cpp"); e.code = "ERR_MODULE_NOT_FOUND"; throw e; } return n(s, c); }';
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const { createGgufModel } = await import(${JSON.stringify(new URL('../../src/models/gguf.ts', import.meta.url).pathname)});
      try { await createGgufModel({ model: ${JSON.stringify(MODEL)} }); console.log('loaded'); }
      catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); }
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url).pathname,
      encoding: 'utf8',
    });
    const out = JSON.parse(r.stdout.trim());
    expect(out.name).toBe('StepwiseError');
    expect(out.message).toMatch(
      /optional dependency node-llama-cpp: install it with `npm i node-llama-cpp@3.21.1`/,
    );
  });

  it('fails with a clear message for a missing file', async () => {
    await expect(createGgufModel({ model: '/nonexistent/x.gguf' })).rejects.toThrow(StepwiseError);
    await expect(createGgufModel({ model: '/nonexistent/x.gguf' })).rejects.toThrow(/model file not found/);
    expect(providers.parse('gguf:hf:user/repo:Q4_K_M')).toMatchObject({
      provider: 'gguf',
      id: 'hf:user/repo:Q4_K_M',
    });
  });

  it('`stepwise sample` runs on the local model (acceptance 4)', async () => {
    const dir = tempDir('stepwise-gguf-');
    try {
      const out = join(dir, 'out.jsonl');
      const args = [BIN, 'sample', '--dataset', 'gsm8k', '--path', sharedData('gsm8k/test.jsonl')];
      args.push(
        '--policy',
        `gguf:${MODEL}`,
        '--n',
        '2',
        '--max-tokens',
        '32',
        '--limit',
        '2',
        '--out',
        out,
        '--json',
      );
      const child = spawn(process.execPath, args, {
        env: { ...process.env, STEPWISE_HOME: join(dir, 'home'), STEPWISE_QUIET: '1' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(stderr).not.toMatch(/unexpected error/);
      expect(code).toBe(0);
      const recs = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(recs).toHaveLength(2);
      for (const r of recs) {
        expect(r.samples).toHaveLength(2);
        for (const s of r.samples) {
          expect(s.text.length).toBeGreaterThan(0);
          expect(s.correct).toBe(false);
          expect(s.tokens).toBeLessThanOrEqual(32);
        }
      }
      expect(JSON.parse(stdout).accuracy).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
