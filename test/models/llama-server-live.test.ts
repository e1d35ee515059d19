import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StepwiseError } from '../../src/core/errors.js';
import type { CallOptions, GenerateRequest } from '../../src/core/model.js';
import { createRng } from '../../src/core/rng.js';
import { createShepherdJudge } from '../../src/judge/shepherd.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { createPolicy } from '../../src/models/policy.js';
import { chunkReset } from '../../src/search/chunk-reset.js';
import { DEFAULT_SEARCH_CONFIG } from '../../src/search/registry.js';
import { fakeJudge } from '../search/fakes.js';
import { startCli } from '../support/cli.js';
import { type LlamaServer, startLlamaServer, startRecordingProxy } from '../support/llama-server.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * The real llama.cpp server (../shared/bin/llama-server, tiny stories260K model, -np 4, -t 1),
 * reached through a recording proxy so the tests count what the server was sent. Numbers here
 * come from a tiny real model: they test the plumbing, not the quality.
 */
let server: LlamaServer;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let dir: string;
const models: OpenAIModel[] = [];

beforeAll(async () => {
  dir = tempDir('stepwise-llama-live-');
  server = await startLlamaServer({ slots: 4 });
  proxy = await startRecordingProxy(server.port);
}, 60_000);
afterAll(async () => {
  for (const m of models) await m.close();
  await proxy?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function model(): OpenAIModel {
  const m = new OpenAIModel({ model: 'm', baseUrl: proxy.url, rng: createRng(1), maxRetries: 1 });
  models.push(m);
  return m;
}

const posts = () => proxy.requests.filter((q) => q.method === 'POST');

describe('llama-server (real llama.cpp, tiny model)', () => {
  it('samples n > 1 in one request; seeds repeat; stop strings are cut and end with finish "stop"', async () => {
    const m = model();
    const before = posts().length;
    const a = await m.generate({ prompt: 'Once upon a time', n: 3, maxTokens: 12, temperature: 1, seed: 5 });
    expect(a.samples).toHaveLength(3);
    expect(posts().length - before).toBe(1);
    expect(posts().at(-1)?.body.n).toBe(3);
    const again = await m.generate({
      prompt: 'Once upon a time',
      n: 3,
      maxTokens: 12,
      temperature: 1,
      seed: 5,
    });
    expect(again.samples.map((s) => s.text)).toEqual(a.samples.map((s) => s.text));
    const stopped = await m.generate({
      prompt: 'Once upon a time',
      maxTokens: 40,
      temperature: 0,
      stop: ['.'],
    });
    expect(stopped.samples[0].finishReason).toBe('stop');
    expect(stopped.samples[0].text).not.toContain('.');
    const long = await m.generate({ prompt: 'Once upon a time', maxTokens: 3, temperature: 0 });
    expect(long.samples[0].finishReason).toBe('length');
    expect(long.samples[0].completionTokens).toBe(3);
  });

  it('reads /v1/completions logprobs in its chat layout', async () => {
    const r = await model().generate({
      prompt: 'Once upon a time',
      maxTokens: 3,
      temperature: 0,
      logprobs: 3,
    });
    const lp = r.samples[0].logprobs!;
    expect(lp).toHaveLength(3);
    expect(lp.map((t) => t.token).join('')).toBe(r.samples[0].text);
    expect(lp[0].top?.length).toBe(3);
    expect(lp.every((t) => t.logprob <= 0)).toBe(true);
  });

  it('continues an assistant message without repeating it (the echoed prefill is cut)', async () => {
    const r = await model().generate({
      messages: [
        { role: 'user', content: 'Tell a story.' },
        { role: 'assistant', content: 'Once upon a time' },
      ],
      n: 2,
      maxTokens: 8,
      temperature: 1,
      seed: 3,
    });
    for (const s of r.samples) expect(s.text.startsWith('Once upon a time')).toBe(false);
    expect(proxy.requests.some((q) => q.method === 'GET' && q.path === '/v1/models')).toBe(true);
  });

  it('a prompt longer than the slot context is a clear error, not retries', async () => {
    const before = posts().length;
    const err = await model()
      .generate({ prompt: 'Once upon a time '.repeat(800), maxTokens: 8 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect(err.message).toMatch(/exceeds the available context size/);
    expect(err.message).toMatch(/lower --max-tokens/);
    expect(posts().length - before).toBe(1);
  });

  it('serves the shepherd judge from top logprobs', async () => {
    const judge = createShepherdJudge(model(), { topLogprobs: 5 });
    const before = posts().length;
    const r = await judge.judge(
      { id: 'p', question: 'What is 2 + 2?', answer: '4', domain: 'math', source: 'test' },
      ['Once upon a time there was a girl.', 'She had 4 apples.'],
    );
    expect(r.judgments).toHaveLength(2);
    const sent = posts().slice(before);
    expect(sent).toHaveLength(2);
    expect(sent.every((q) => q.body.logprobs === 5 && q.body.max_tokens === 1)).toBe(true);
  });

  it('acceptance 1: sample --n 4 on 5 GSM8K problems is 5 requests with n = 4; the same command again sends none', async () => {
    const home = join(dir, 'home-sample');
    const out = join(dir, 'S.jsonl');
    const args = [
      'sample',
      '--dataset',
      'gsm8k',
      '--path',
      sharedData('gsm8k/test.jsonl'),
      '--limit',
      '5',
      '--policy',
      'openai:m',
      '--base-url',
      proxy.url,
      '--n',
      '4',
      '--max-tokens',
      '48',
      '--out',
      out,
    ];
    const before = posts().length;
    const run = await startCli(args, home).done;
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    for (const l of lines) expect(l.samples).toHaveLength(4);
    const sent = posts().slice(before);
    expect(sent.map((q) => [q.path, q.body.n])).toEqual(Array(5).fill(['/v1/completions', 4]));
    const mark = proxy.requests.length;
    const rerun = await startCli(args, home).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(proxy.requests.slice(mark)).toEqual([]);
  }, 120_000);

  it('acceptance 2: label --prompt-form chat --keep-rollouts on a 3-chunk solution: no rollout repeats chunk 0', async () => {
    const chunks = [
      'Once upon a time, there was a little girl.',
      'She liked to play in the park.',
      'So the answer is \\boxed{4}.',
    ];
    const input = join(dir, 'L.jsonl');
    writeFileSync(
      input,
      `${JSON.stringify({ id: 's1', problem: 'What is 2 + 2?', answer: '4', steps: chunks })}\n`,
    );
    const out = join(dir, 'O-chat.jsonl');
    const run = await startCli(
      [
        'label',
        '--input',
        input,
        '--policy',
        'openai:m',
        '--base-url',
        proxy.url,
        '--rollouts',
        '4',
        '--max-tokens',
        '24',
        '--prompt-form',
        'chat',
        '--keep-rollouts',
        '--signals',
        'abs-q',
        '--out',
        out,
        '--no-cache',
      ],
      join(dir, 'home-label-chat'),
    ).done;
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(readFileSync(out, 'utf8').trim());
    const rollouts = record.chunks.flatMap((c: { rollouts?: Array<{ text: string }> }) => c.rollouts ?? []);
    expect(rollouts.length).toBeGreaterThan(0);
    for (const r of rollouts) expect(r.text.startsWith(chunks[0])).toBe(false);
  }, 120_000);

  it('label resumes where it stopped and a rerun sends nothing', async () => {
    const home = join(dir, 'home-label-resume');
    const input = join(dir, 'L-resume.jsonl');
    const out = join(dir, 'O-resume.jsonl');
    const row = (i: number) =>
      JSON.stringify({
        id: `r${i}`,
        problem: `What is ${i} + 1?`,
        answer: String(i + 1),
        steps: ['Once upon a time, there was a dog.', `The answer is \\boxed{${i + 1}}.`],
      });
    const args = [
      'label',
      '--input',
      input,
      '--policy',
      'openai:m',
      '--base-url',
      proxy.url,
      '--rollouts',
      '2',
      '--max-tokens',
      '16',
      '--signals',
      'abs-q',
      '--out',
      out,
    ];
    writeFileSync(input, `${row(1)}\n${row(2)}\n`);
    const first = await startCli(args, home).done;
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(input, `${row(1)}\n${row(2)}\n${row(3)}\n`);
    const before = posts().length;
    const second = await startCli(args, home).done;
    expect(second.code, second.stderr).toBe(0);
    const sent = posts().slice(before);
    // Only the new solution's prefixes were asked for.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((q) => String(q.body.prompt).includes('What is 3 + 1?'))).toBe(true);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
    const mark = posts().length;
    const third = await startCli(args, home).done;
    expect(third.code, third.stderr).toBe(0);
    expect(posts().length).toBe(mark);
  }, 120_000);

  for (const strategy of ['chunk-reset', 'greedy-prm']) {
    it(`search --strategy ${strategy} with the shepherd judge runs on the real server`, async () => {
      const out = join(dir, `search-${strategy}.jsonl`);
      const before = posts().length;
      const run = await startCli(
        [
          'search',
          '--dataset',
          'gsm8k',
          '--path',
          sharedData('gsm8k/test.jsonl'),
          '--limit',
          '1',
          '--strategy',
          strategy,
          '--policy',
          'openai:m',
          '--judge',
          'shepherd:openai:m',
          '--base-url',
          proxy.url,
          '--max-step-tokens',
          '12',
          '--max-steps',
          '2',
          '--max-attempts',
          '2',
          '--children',
          '2',
          '--max-backtracks',
          '1',
          '--out',
          out,
          '--no-cache',
        ],
        join(dir, `home-${strategy}`),
      ).done;
      expect(run.code, run.stderr).toBe(0);
      const line = JSON.parse(readFileSync(out, 'utf8').trim());
      expect(line.id).toBeDefined();
      const sent = posts().slice(before);
      // Policy steps and shepherd judgments (one-token requests with top logprobs) both reached the server.
      expect(sent.some((q) => q.body.max_tokens === 12)).toBe(true);
      expect(sent.some((q) => q.body.max_tokens === 1 && typeof q.body.logprobs === 'number')).toBe(true);
    }, 120_000);
  }
});

/**
 * llama.cpp's n > 1 and stops, against the real server (issue 28, items B, C, G). Sources: ggml-org/llama.cpp
 * tools/server/server-context.cpp `handle_completions_impl` (commit 001d906: an n-choice reply is the
 * first choice's task reply with the others' choices appended, so `usage` and `__verbose` are the
 * first choice's) and tools/server/server-task.cpp (`__verbose.stop_type` / `stopping_word`); the
 * binary is commit 80fb11a, which does the same.
 */
describe('llama-server: per-choice tokens, stop types, n capped at the slots', () => {
  /** The EOS token of stories260K is id 2; a bias of 21 makes texts end at EOS after a few words. */
  const EOS_BIAS = { logit_bias: { '2': 21 } };

  it('n = 4 gives each sample its own completion tokens, within ±35% of what n = 1 counts for the same text', async () => {
    const m = model();
    let n4 = 0;
    let n1 = 0;
    let samples = 0;
    for (const [i, prompt] of ['Once upon a time', 'One day, a little dog', 'The sun was'].entries()) {
      const before = posts().length;
      const r = await m.generate({
        prompt,
        n: 4,
        maxTokens: 60,
        temperature: 1,
        seed: 40 + i,
        extra: EOS_BIAS,
      });
      const sent = posts().slice(before);
      expect(sent.map((q) => q.body.n)).toEqual([4]);
      const reply = sent[0].reply as { usage: { completion_tokens: number } };
      // The server's usage is the first choice's alone; the first sample keeps it exactly.
      expect(r.samples[0].completionTokens).toBe(reply.usage.completion_tokens);
      expect(r.usage.completionTokens).toBe(r.samples.reduce((a, s) => a + s.completionTokens, 0));
      // llama.cpp seeds choice k with seed + k: one n = 1 request per choice gives the same text,
      // and its usage counts that text's tokens exactly.
      for (const [k, s] of r.samples.entries()) {
        const truth = (await (
          await fetch(`${proxy.url}/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...sent[0].body, n: 1, seed: (sent[0].body.seed as number) + k }),
          })
        ).json()) as { choices: Array<{ text: string }>; usage: { completion_tokens: number } };
        expect(truth.choices[0].text).toBe(s.text);
        n1 += truth.usage.completion_tokens;
        n4 += s.completionTokens;
        samples++;
      }
    }
    expect(samples).toBe(12);
    const ratio = n4 / n1;
    expect(ratio, `n=4 ${n4 / samples} tokens per sample, n=1 ${n1 / samples}`).toBeGreaterThan(0.65);
    expect(ratio).toBeLessThan(1.35);
  }, 120_000);

  it('asks for the stop type and reads which stop string (or the end of text) ended each sample', async () => {
    const m = model();
    const before = posts().length;
    const r = await m.generate({
      prompt: 'Once upon a time',
      n: 3,
      maxTokens: 40,
      temperature: 1,
      seed: 9,
      stop: ['Lily', '.'],
    });
    const sent = posts().slice(before);
    // One sample per request: the stop type llama.cpp reports is the first choice's only.
    expect(sent.map((q) => [q.body.n, q.body.verbose])).toEqual(Array(3).fill([undefined, true]));
    expect(r.warnings).toEqual([]);
    const truth = sent
      .map((q) => (q.reply as { __verbose: { stop_type: string; stopping_word: string } }).__verbose)
      .map((v) => (v.stop_type === 'word' ? v.stopping_word : v.stop_type === 'eos' ? null : undefined));
    expect(truth.every((t) => t === 'Lily' || t === '.')).toBe(true);
    expect(r.samples.map((s) => s.stopReason).sort()).toEqual([...truth].sort());
    // Without stop strings a stop is the end of the text.
    const eos = await m.generate({
      prompt: 'Once upon a time',
      maxTokens: 60,
      temperature: 1,
      seed: 2,
      extra: EOS_BIAS,
    });
    expect(eos.samples[0].finishReason).toBe('stop');
    expect(eos.samples[0].stopReason).toBeNull();
  }, 60_000);

  it('n above the slots is capped at the slot count (-np 4), not downgraded to n = 1', async () => {
    const m = model();
    const before = posts().length;
    const r = await m.generate({ prompt: 'Once upon a time', n: 6, maxTokens: 8, temperature: 1, seed: 3 });
    expect(r.samples).toHaveLength(6);
    const sent = proxy.requests.slice(before === 0 ? 0 : proxy.requests.indexOf(posts()[before]));
    expect(sent.filter((q) => q.method === 'POST').map((q) => [q.body.n, q.status])).toEqual([
      [6, 400],
      [4, 200],
      [2, 200],
    ]);
    expect(sent.some((q) => q.method === 'GET' && q.path === '/props')).toBe(true);
    expect(r.warnings.map((w) => w.details).join(' ')).toMatch(/at most n = 4/);
    // From now on n = 16 is four concurrent requests of 4.
    const mark = posts().length;
    const big = await m.generate({
      prompt: 'Once upon a time',
      n: 16,
      maxTokens: 8,
      temperature: 1,
      seed: 4,
    });
    expect(big.samples).toHaveLength(16);
    expect(
      posts()
        .slice(mark)
        .map((q) => q.body.n),
    ).toEqual([4, 4, 4, 4]);
  }, 60_000);

  it('chunk-reset makes no step call after a solution ended', async () => {
    // Every policy step carries the EOS bias: steps end at the end of text, at the separator or at
    // the token limit. A judge that accepts every chunk leaves no regeneration to muddy the count.
    const m = model();
    const biased = new Proxy(m, {
      get(target, key, receiver) {
        if (key === 'generate')
          return (req: GenerateRequest, o?: CallOptions) =>
            // verbose: the server's own account of every stop, whatever the backend asks for.
            target.generate({ ...req, extra: { ...req.extra, ...EOS_BIAS, verbose: true } }, o);
        const v = Reflect.get(target, key, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const { judge } = fakeJudge({ verdict: () => ({ verdict: 'positive', score: 1 }) });
    let endedAtEos = 0;
    for (const seed of [1, 2, 3, 4]) {
      const before = posts().length;
      const result = await chunkReset(
        { id: `p${seed}`, question: 'What is 2 + 2?', answer: '4', domain: 'math', source: 'test' },
        { ...DEFAULT_SEARCH_CONFIG, maxStepTokens: 40, maxSteps: 8, maxAttempts: 3, seed },
        { policy: createPolicy(biased), judge },
      );
      const steps = posts().slice(before);
      const ends = steps.map((q) => {
        const r = q.reply as { choices: Array<{ finish_reason: string }>; __verbose?: { stop_type: string } };
        return r.choices[0].finish_reason !== 'stop' || r.__verbose?.stop_type !== 'word';
      });
      // The server's own account: the first step that did not stop on the separator is the last call.
      expect(ends.indexOf(true), `seed ${seed}: ${JSON.stringify(ends)}`).toBe(steps.length - 1);
      expect(steps.every((q) => q.body.n === undefined)).toBe(true);
      expect(result.stats?.ended ?? true).toBe(true);
      const last = steps[steps.length - 1].reply as { __verbose?: { stop_type: string } };
      if (last.__verbose?.stop_type === 'eos') endedAtEos++;
    }
    // The case this is about: a step that ended at the end of text, which llama.cpp reports as "stop".
    expect(endedAtEos).toBeGreaterThan(0);
  }, 120_000);
});
