import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { type ExportOptions, exportTrainingData, TASK_FORMATS } from '../../src/train/export.js';
import { sharedData } from '../support/shared-data.js';
import { labelRows, sampleRows, selfsegRows } from './export-fixtures.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

/**
 * OpenRLHF's SFT loader on every SFT task stepwise exports for it. The reader is OpenRLHF's own
 * `preprocess_data` (openrlhf/datasets/sft_dataset.py, commit 3c3be62), run unchanged from
 * ../shared/peers/openrlhf/sft_preprocess.py by test/support/openrlhf-sft.py, in both of its modes:
 * plain (prompt + response as written) and `--apply_chat_template` (the Qwen2.5 template rendered
 * as transformers renders it, with python3's jinja2). Every row must load in both, and what the
 * trainer then sees must be our conversation: the target is the trained response.
 */

const PEER = sharedData('../peers/openrlhf/sft_preprocess.py');
const TEMPLATE_FILE = sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja');
const HARNESS = join(import.meta.dirname, '..', 'support', 'openrlhf-sft.py');

interface Loaded {
  id: string;
  plain: [string, string] | { error: string };
  chat: [string, string] | { error: string };
}

function loadWithOpenRlhf(file: string, inputKey: string, outputKey: string): Loaded[] {
  if (!existsSync(PEER)) throw new Error(`OpenRLHF's preprocess_data is missing at ${PEER}`);
  const r = spawnSync('/usr/bin/python3', [HARNESS, PEER, TEMPLATE_FILE, file, inputKey, outputKey], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`the OpenRLHF harness failed (needs python3-jinja2): ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Loaded);
}

const dir = tempDir('stepwise-openrlhf-sft-');
const labels = writeJsonlFile(dir, 'labels.jsonl', labelRows(60));
const samples = writeJsonlFile(dir, 'samples.jsonl', sampleRows(40));
const selfseg = writeJsonlFile(dir, 'selfseg.jsonl', selfsegRows(30));
const chatTemplate = loadChatTemplate(TEMPLATE_FILE);
const findContinuation: ExportOptions['findContinuation'] = async (question, gold, prefix) =>
  `then ${question.length} ${prefix.text.length} gives \\boxed{${gold}}`;

const SFT_CASES: Record<string, Omit<ExportOptions, 'out' | 'format'>> = {
  selfseg: { from: selfseg, task: 'selfseg' },
  'refine-global': { from: samples, task: 'refine-global', seed: 2 },
  'refine-local': { from: labels, task: 'refine-local', findContinuation, chatTemplate },
};

describe("OpenRLHF's SFT loader (its own preprocess_data) on stepwise's SFT exports", () => {
  it('covers every SFT task that exports to openrlhf', () => {
    const labelTasks = ['judge-rl', 'prm', 'sorm'];
    const sft = Object.entries(TASK_FORMATS)
      .filter(([task, formats]) => !labelTasks.includes(task) && formats.includes('openrlhf'))
      .map(([task]) => task)
      .sort();
    expect(Object.keys(SFT_CASES).sort()).toEqual(sft);
  });

  for (const [task, c] of Object.entries(SFT_CASES))
    for (const keys of [{}, { promptKey: 'q', labelKey: 'a' }]) {
      it(`${task}${keys.promptKey ? ' (own keys)' : ''}: every row loads with and without --apply_chat_template`, async () => {
        const out = join(dir, `${task}-${keys.promptKey ?? 'default'}.jsonl`);
        const summary = await exportTrainingData({ ...c, ...keys, format: 'openrlhf', out });
        expect(summary.rows).toBeGreaterThan(3);
        const rows = readFileSync(out, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, string>);
        const loaded = loadWithOpenRlhf(out, keys.promptKey ?? 'prompt', keys.labelKey ?? 'response');
        expect(loaded).toHaveLength(rows.length);
        rows.forEach((row, i) => {
          const target = row[keys.labelKey ?? 'response'];
          const { plain, chat } = loaded[i];
          expect(plain, `${row.id} plain`).toBeInstanceOf(Array);
          expect(chat, `${row.id} --apply_chat_template`).toBeInstanceOf(Array);
          const [, plainResponse] = plain as [string, string];
          const [chatPrompt, chatResponse] = chat as [string, string];
          expect(plainResponse).toBe(target);
          // The template closes the assistant turn after the target: the target is what is trained.
          expect(chatResponse).toBe(`${target}<|im_end|>\n`);
          expect(chatPrompt.endsWith('<|im_start|>assistant\n')).toBe(true);
        });
        if (task === 'refine-local') {
          // Pre-rendered with the model's template up to the good prefix: plain mode trains the
          // continuation of that assistant turn, not a new turn.
          const prefixed = loaded.filter((l) => {
            const [p] = l.plain as [string, string];
            return !p.endsWith('<|im_start|>assistant\n');
          });
          expect(prefixed.length).toBeGreaterThan(0);
          for (const l of prefixed)
            expect((l.plain as [string, string])[0]).toMatch(/<\|im_start\|>assistant\n\S/);
        }
      });
    }

  it('refine-local without --chat-template is refused with the flag to pass', async () => {
    const out = join(dir, 'refused.jsonl');
    await expect(
      exportTrainingData({ from: labels, task: 'refine-local', format: 'openrlhf', findContinuation, out }),
    ).rejects.toThrow(/--chat-template FILE/);
  });
});
