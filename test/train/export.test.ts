import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { exportTrainingData } from '../../src/train/export.js';
import { propagateBackward, toMathShepherd } from '../../src/train/formats.js';
import { sharedData } from '../support/shared-data.js';
import { labeledFixture, tempDir, writeJsonlFile } from './fixtures.js';

const qwenTemplate = () => loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));

const dir = tempDir();
const rows = labeledFixture(12, (s) => (s % 2 === 0 ? 2 : -1));
const labelFile = writeJsonlFile(dir, 'labels.jsonl', rows);
const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const bigintSafe = (v: unknown) =>
  JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)));

describe('stepwise export', () => {
  it('verl Parquet reads back in an independent reader (arrow-rs via parquet-wasm) with the nested types, values intact', async () => {
    const out = join(dir, 'judge.parquet');
    const summary = await exportTrainingData({
      from: labelFile,
      task: 'judge-rl',
      format: 'verl',
      out,
      signal: 'abs-q',
      seed: 3,
    });
    expect(summary.rows).toBe(24); // 12 negatives (6 solutions × chunks 2,3) and 12 of 36 positives
    const bytes = readFileSync(out);
    const table = arrow.tableFromIPC(readParquet(new Uint8Array(bytes)).intoIPCStream());
    const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
    expect(types.prompt).toBe('List<Struct<{role:Utf8, content:Utf8}>>');
    expect(types.reward_model).toBe('Struct<{style:Utf8, ground_truth:Utf8}>');
    expect(types.data_source).toBe('Utf8');
    expect(types.ability).toBe('Utf8');
    expect(types.extra_info).toMatch(/^Struct<\{split:Utf8, index:Int64/);
    const viaArrow = table.toArray().map((r) => bigintSafe(r.toJSON()));
    const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const viaHyparquet = bigintSafe(await parquetReadObjects({ file: ab }));
    expect(viaArrow).toEqual(viaHyparquet);
    expect(viaArrow).toHaveLength(24);
    const first = viaArrow[0];
    expect(first.prompt[0].role).toBe('system');
    expect(first.prompt[1].content).toContain(rows[0].problem);
    expect(['Positive', 'Negative']).toContain(first.reward_model.ground_truth);
    expect(first.reward_model.style).toBe('rule');
    expect(first.extra_info.split).toBe('train');
    // verl gives the reward function extra_info but not the prompt: the question travels there.
    expect(first.extra_info.question).toBe(rows.find((r) => r.id === first.extra_info.id)?.problem);
    expect(viaArrow.map((r: { extra_info: { index: number } }) => r.extra_info.index)).toEqual([
      ...Array(24).keys(),
    ]);
    expect(
      viaArrow.filter(
        (r: { reward_model: { ground_truth: string } }) => r.reward_model.ground_truth === 'Positive',
      ),
    ).toHaveLength(12);
  });

  it('TRL stepwise rows have prompt, completions and labels of equal lengths', async () => {
    const out = join(dir, 'prm.trl.jsonl');
    await exportTrainingData({ from: labelFile, task: 'prm', format: 'trl', out, signal: 'abs-q' });
    const trl = readJsonl(out);
    expect(trl).toHaveLength(12);
    for (const r of trl) {
      expect(typeof r.prompt).toBe('string');
      expect(r.completions.length).toBe(r.labels.length);
      expect(r.completions.length).toBe(4);
      expect(r.labels.every((l: unknown) => typeof l === 'boolean')).toBe(true);
    }
    expect(trl[0].labels).toEqual([true, true, false, false]);
  });

  it('Math-Shepherd rows put + / - exactly where the ки tags were', () => {
    const ms = toMathShepherd(rows[0], 'abs-q');
    expect(ms.input.split('ки')).toHaveLength(5);
    const pieces = ms.input.split('ки');
    let rebuilt = pieces[0];
    ['+', '+', '-', '-'].forEach((t, i) => {
      rebuilt += t + pieces[i + 1];
    });
    expect(ms.label).toBe(rebuilt);
  });

  it('SORM: one TRL row per prefix, its steps and their labels, balanced per prefix length', async () => {
    // Solution s: first error at chunk s % 4 (s % 5 === 4: none), so each length has both classes, unevenly.
    const many = labeledFixture(30, (s) => (s % 5 === 4 ? -1 : s % 4));
    const from = writeJsonlFile(dir, 'sorm-many.jsonl', many);
    const out = join(dir, 'sorm-prefix.trl.jsonl');
    const summary = await exportTrainingData({ from, task: 'sorm', format: 'trl', out, seed: 3 });
    const trl = readJsonl(out);
    expect(trl).toHaveLength(summary.rows);
    const byLength = new Map<number, { pos: number; neg: number }>();
    for (const r of trl) {
      const [solutionId, k] = r.id.split('@');
      const src = many.find((m) => m.id === solutionId)!;
      // The steps up to the prefix, with their labels.
      expect(r.completions).toEqual(src.chunks.slice(0, Number(k)).map((c) => c.text));
      expect(r.labels).toEqual(src.chunks.slice(0, Number(k)).map((c) => c.labels.sorm));
      const b = byLength.get(r.completions.length) ?? { pos: 0, neg: 0 };
      if (r.labels.at(-1)) b.pos++;
      else b.neg++;
      byLength.set(r.completions.length, b);
    }
    expect(byLength.size).toBeGreaterThanOrEqual(3);
    for (const b of byLength.values()) expect(Math.abs(b.pos - b.neg)).toBeLessThanOrEqual(1);
    // The summary's kept/dropped per length add up to the prefixes found and the rows written.
    const stats = Object.entries(summary.byPrefixLength ?? {});
    expect(stats.map(([k]) => k)).toEqual(['1', '2', '3', '4']);
    for (const [k, b] of stats) {
      expect(b.kept + b.dropped).toBe(b.positive + b.negative);
      expect(b.kept).toBe((byLength.get(Number(k))?.pos ?? 0) + (byLength.get(Number(k))?.neg ?? 0));
      expect(b.positive + b.negative).toBe(30);
    }
    expect(stats.reduce((a, [, b]) => a + b.kept, 0)).toBe(summary.rows);
    expect(stats.some(([, b]) => b.dropped > 0)).toBe(true);
  });

  it('SORM propagates positives backward', () => {
    expect(propagateBackward([false, true, false, true, false])).toEqual([true, true, true, true, false]);
  });

  it('OpenRLHF keys come from the command line', async () => {
    const out = join(dir, 'judge.openrlhf.jsonl');
    await exportTrainingData({
      from: labelFile,
      task: 'judge-rl',
      format: 'openrlhf',
      out,
      signal: 'abs-q',
      promptKey: 'context',
      labelKey: 'verdict',
    });
    const r = readJsonl(out)[0];
    expect(Array.isArray(r.context)).toBe(true);
    expect(['Positive', 'Negative']).toContain(r.verdict);
  });

  it('OpenRLHF PRM and SORM rows carry one reward token per ки placeholder, as a list', async () => {
    const out = join(dir, 'prm.openrlhf.jsonl');
    await exportTrainingData({ from: labelFile, task: 'prm', format: 'openrlhf', out, signal: 'abs-q' });
    const prm = readJsonl(out);
    // openrlhf/datasets/process_reward_dataset.py: `assert isinstance(label_values, list)`, one
    // label per placeholder token of the input.
    expect(prm[0].label).toEqual(['+', '+', '-', '-']);
    for (const r of prm) expect(r.label).toHaveLength(r.input.split('ки').length - 1);
    const sorm = join(dir, 'sorm.openrlhf.jsonl');
    await exportTrainingData({ from: labelFile, task: 'sorm', format: 'openrlhf', out: sorm });
    const sormRows = readJsonl(sorm);
    expect(sormRows.length).toBeGreaterThan(0);
    for (const r of sormRows) {
      expect(Array.isArray(r.label)).toBe(true);
      expect(r.label).toHaveLength(r.input.split('ки').length - 1);
    }
  });

  it('refuses a task/format pair that makes no sense and names a bad input line', async () => {
    await expect(
      exportTrainingData({ from: labelFile, task: 'judge-rl', format: 'mathshepherd', out: join(dir, 'x') }),
    ).rejects.toThrow(/cannot be written as mathshepherd/);
    const bad = writeJsonlFile(dir, 'bad.jsonl', [
      rows[0],
      rows[1],
      { id: 'x', problem: 'p', chunks: [{ text: 1, labels: {} }] },
    ]);
    await expect(
      exportTrainingData({ from: bad, task: 'prm', format: 'trl', out: join(dir, 'y') }),
    ).rejects.toThrow(/bad\.jsonl, line 3, field "chunks\.0\.text"/);
  });

  it('global refinement pairs an incorrect draft with a correct solution of the same problem', async () => {
    const samples = writeJsonlFile(dir, 'samples.jsonl', [
      {
        id: 'a',
        question: 'Q a',
        samples: [
          { text: 'wrong a', correct: false },
          { text: 'right a', correct: true },
        ],
      },
      { id: 'b', question: 'Q b', samples: [{ text: 'wrong b', correct: false }] },
    ]);
    const out = join(dir, 'global.jsonl');
    const s = await exportTrainingData({ from: samples, task: 'refine-global', format: 'trl', out });
    expect(s.rows).toBe(1);
    const r = readJsonl(out)[0];
    expect(r.prompt[0].content).toContain('wrong a');
    expect(r.completion[0].content).toBe('right a');
  });

  it('local refinement marks [BAD] before the first negative chunk and targets a correct continuation', async () => {
    const out = join(dir, 'local.jsonl');
    const seen: string[][] = [];
    const s = await exportTrainingData({
      from: labelFile,
      task: 'refine-local',
      format: 'openrlhf',
      out,
      signal: 'abs-q',
      chatTemplate: qwenTemplate(),
      findContinuation: async (_q, gold, prefix) => {
        seen.push([...prefix.chunks]);
        return `continue to \\boxed{${gold}}`;
      },
    });
    expect(s.rows).toBe(6);
    const r = readJsonl(out)[0];
    // The model's template up to the good prefix, which the assistant turn continues.
    expect(r.prompt).toContain(`[BAD] ${rows[0].chunks[2].text}`);
    expect(
      r.prompt.endsWith(`<|im_start|>assistant\n${rows[0].chunks[0].text}\n\n${rows[0].chunks[1].text}\n\n`),
    ).toBe(true);
    expect(r.response).toBe('continue to \\boxed{3}');
    expect(seen[0]).toEqual([rows[0].chunks[0].text, rows[0].chunks[1].text]);
  });

  it('local refinement reuses the kept rollouts of the prefix before the first bad step; samples only where none is correct', async () => {
    // Label records as `label --keep-rollouts` writes them: solution s's chunk i keeps two rollouts.
    const withRollouts = rows.map((r, s) => ({
      ...r,
      emptyPrefixRollouts: [{ text: `from scratch ${s}`, correct: true }],
      chunks: r.chunks.map((c, i) => ({
        ...c,
        rollouts: [
          { text: `wrong after ${s}.${i}`, correct: false },
          // Solution 4 kept no correct rollout before its bad step: that one is sampled.
          { text: `right after ${s}.${i}`, correct: s !== 4 },
        ],
      })),
    }));
    const from = writeJsonlFile(dir, 'kept.jsonl', withRollouts);
    const out = join(dir, 'local-kept.jsonl');
    const sampledFor: string[] = [];
    const s = await exportTrainingData({
      from,
      task: 'refine-local',
      format: 'openrlhf',
      out,
      signal: 'abs-q',
      chatTemplate: qwenTemplate(),
      findContinuation: async (q) => {
        sampledFor.push(q);
        return 'sampled';
      },
    });
    expect(s.rows).toBe(6);
    expect(s.stats).toMatchObject({ fromKeptRollouts: 5, sampled: 1, noCorrectContinuation: 0 });
    const got = readJsonl(out);
    // First bad chunk is 2: the continuation comes from the prefix ending after chunk 1.
    expect(got[0].response).toBe('right after 0.1');
    expect(got.find((r) => r.id.startsWith('p4'))?.response).toBe('sampled');
    expect(sampledFor).toEqual([rows[4].problem]);
    // Without a policy, kept rollouts are enough (the one without a correct rollout is skipped);
    // without either, a usage error says what to do.
    const noPolicy = await exportTrainingData({
      from,
      task: 'refine-local',
      format: 'trl',
      out,
      signal: 'abs-q',
      chatTemplate: loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja')),
    });
    expect(noPolicy.stats).toMatchObject({ fromKeptRollouts: 5, sampled: 0, noCorrectContinuation: 1 });
    await expect(
      exportTrainingData({ from: labelFile, task: 'refine-local', format: 'trl', out, signal: 'abs-q' }),
    ).rejects.toThrow(/--keep-rollouts.*--policy/);
    // A first error at chunk 0: the bare problem's rollouts.
    const atZero = writeJsonlFile(dir, 'kept0.jsonl', [
      {
        ...withRollouts[0],
        chunks: withRollouts[0].chunks.map((c) => ({ ...c, labels: { ...c.labels, 'abs-q': false } })),
      },
    ]);
    await exportTrainingData({
      from: atZero,
      task: 'refine-local',
      format: 'openrlhf',
      out,
      signal: 'abs-q',
      chatTemplate: qwenTemplate(),
    });
    expect(readJsonl(out)[0].response).toBe('from scratch 0');
  });

  it("TRL local refinement rows are prompt–completion text in the model's own template: the completion continues the prefix", async () => {
    const out = join(dir, 'local.trl.jsonl');
    const findContinuation = async (_q: string, gold: string) => `continue to \\boxed{${gold}}`;
    await expect(
      exportTrainingData({
        from: labelFile,
        task: 'refine-local',
        format: 'trl',
        out,
        signal: 'abs-q',
        findContinuation,
      }),
    ).rejects.toThrow(/--chat-template/);
    const chatTemplate = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));
    await exportTrainingData({
      from: labelFile,
      task: 'refine-local',
      format: 'trl',
      out,
      signal: 'abs-q',
      findContinuation,
      chatTemplate,
    });
    const r = readJsonl(out)[0];
    // A string prompt: SFTTrainer tokenizes prompt + completion as they are and trains the completion only.
    expect(typeof r.prompt).toBe('string');
    expect(r.prompt.startsWith('<|im_start|>system\n')).toBe(true);
    expect(r.prompt).toContain(`[BAD] ${rows[0].chunks[2].text}`);
    expect(
      r.prompt.endsWith(`<|im_start|>assistant\n${rows[0].chunks[0].text}\n\n${rows[0].chunks[1].text}\n\n`),
    ).toBe(true);
    expect(r.completion).toBe('continue to \\boxed{3}');
  });

  it('self-segmentation pairs keep only taggings that strip back to the original', async () => {
    const f = writeJsonlFile(dir, 'selfseg.jsonl', [
      { id: 'ok', problem: 'P', text: 'a\n\nb', tagged: '<chunk>a</chunk>\n\n<chunk>b</chunk>' },
      { id: 'bad', problem: 'P', text: 'a\n\nb', tagged: '<chunk>a</chunk>\n\n<chunk>c</chunk>' },
    ]);
    const out = join(dir, 'selfseg.out.jsonl');
    const s = await exportTrainingData({ from: f, task: 'selfseg', format: 'trl', out });
    expect(s.rows).toBe(1);
    expect(s.stats?.rejected).toBe(1);
    expect(readJsonl(out)[0].id).toBe('ok');
  });
});

describe('signal choice', () => {
  it('sorm falls back to an equivalent signal; an absent signal is a usage error naming the ones present', async () => {
    const noSorm = writeJsonlFile(
      dir,
      'nosorm.jsonl',
      rows.map((r) => ({
        ...r,
        chunks: r.chunks.map((c) => ({ ...c, labels: { 'abs-q': c.labels['abs-q'] } })),
      })),
    );
    const s = await exportTrainingData({
      from: noSorm,
      task: 'sorm',
      format: 'trl',
      out: join(dir, 'sorm.jsonl'),
    });
    expect(s.signal).toBe('abs-q');
    // Prefix rows of lengths 3 and 4 (6 positive + 6 negative each); lengths 1–2 are all positive.
    expect(s.rows).toBe(24);
    await expect(
      exportTrainingData({
        from: noSorm,
        task: 'prm',
        format: 'trl',
        signal: 'rel-ratio',
        out: join(dir, 'p.jsonl'),
      }),
    ).rejects.toThrow(/no chunk has a label for signal "rel-ratio"; the file has: abs-q/);
  });
});

describe('Math-Shepherd numbering', () => {
  it('does not number steps twice', () => {
    const row = {
      id: 'x',
      problem: 'P',
      chunks: [
        { text: 'We start.', labels: { s: true } },
        { text: 'Step 1: a', labels: { s: true } },
        { text: 'b', labels: { s: false } },
      ],
    };
    expect(toMathShepherd(row, 's').input).toBe('P Step 1: We start. ки\nStep 2: a ки\nStep 3: b ки');
  });
});
