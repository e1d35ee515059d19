import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { LabelRowSchema, parseRecord, VerlRowSchema } from '../../src/data/record-kinds.js';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { type ExportOptions, exportTrainingData, TASK_FORMATS } from '../../src/train/export.js';
import { EXPORT_FORMAT_SPECS, type ExportFormat } from '../../src/train/export-formats.js';
import type { ExportRecordKind } from '../../src/train/export-records.js';
import { type ExportTask, TASK_EXPORTERS } from '../../src/train/export-tasks.js';
import { sharedData } from '../support/shared-data.js';
import { labelRows, sampleRows, selfsegRows } from './export-fixtures.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

/**
 * One schema per record kind (issue 29 item 5, src/data/record-kinds.ts): every row export writes,
 * in every task × format, is read back and checked against the schema its format's mapper declares
 * (the one its row type is inferred from); the export rows' schemas are strict, so a row with a
 * field more or less than the engine's loader reads fails here.
 */
const dir = tempDir('stepwise-export-kinds-');
const labels = writeJsonlFile(dir, 'labels.jsonl', labelRows(40));
const simLabels = writeJsonlFile(dir, 'labels-sim.jsonl', labelRows(40, { simulated: true }));
const samples = writeJsonlFile(dir, 'samples.jsonl', sampleRows(30));
const selfseg = writeJsonlFile(dir, 'selfseg.jsonl', selfsegRows(30));
const simulated = (rows: unknown[]) => rows.map((r) => ({ ...(r as object), simulated: true }));
const simSamples = writeJsonlFile(dir, 'samples-sim.jsonl', simulated(sampleRows(30)));
const simSelfseg = writeJsonlFile(dir, 'selfseg-sim.jsonl', simulated(selfsegRows(30)));
const chatTemplate = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));
const findContinuation: ExportOptions['findContinuation'] = async (question, gold) =>
  `then ${question.length} gives \\boxed{${gold}}`;

const INPUT: Record<ExportTask, { real: string; sim?: string }> = {
  'judge-rl': { real: labels, sim: simLabels },
  prm: { real: labels, sim: simLabels },
  sorm: { real: labels, sim: simLabels },
  selfseg: { real: selfseg, sim: simSelfseg },
  'refine-global': { real: samples, sim: simSamples },
  'refine-local': { real: labels, sim: simLabels },
};

async function rowsOf(file: string, format: ExportFormat): Promise<unknown[]> {
  if (EXPORT_FORMAT_SPECS[format].file === 'parquet') {
    const buf = readFileSync(file);
    const rows = await parquetReadObjects({
      file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
    });
    // INT64 columns come back as BigInt; the row's numbers are plain numbers.
    return JSON.parse(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
  }
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('every exported row is its format and kind’s schema', () => {
  for (const [task, formats] of Object.entries(TASK_FORMATS) as Array<[ExportTask, ExportFormat[]]>)
    for (const format of formats)
      for (const world of ['real', 'sim'] as const) {
        const from = INPUT[task][world];
        if (!from) continue;
        it(`${task} as ${format} (${world})`, async () => {
          const kind: ExportRecordKind = TASK_EXPORTERS[task].record;
          const schema = (EXPORT_FORMAT_SPECS[format].rows as Record<string, { schema: never } | undefined>)[
            kind
          ]?.schema;
          if (!schema) throw new Error(`${format} has no mapper of ${kind}`);
          const out = join(dir, `${task}.${world}.${EXPORT_FORMAT_SPECS[format].file}`);
          const summary = await exportTrainingData({
            from,
            task,
            format,
            out,
            findContinuation,
            chatTemplate,
          });
          expect(summary.rows).toBeGreaterThan(0);
          const rows = await rowsOf(out, format);
          expect(rows).toHaveLength(summary.rows);
          expect(summary.simulated === true).toBe(world === 'sim');
          rows.forEach((row, i) => {
            parseRecord(schema, { file: out, line: i + 1 }, row);
          });
        });
      }
});

describe('a reader names file, line and field of a row that is not its kind', () => {
  it('a label row without chunk texts, and a verl row with a field its layout does not have', () => {
    expect(() =>
      parseRecord(
        LabelRowSchema,
        { file: 'L.jsonl', line: 7 },
        { id: 'a', problem: 'p', chunks: [{ labels: {} }] },
      ),
    ).toThrow(/L\.jsonl, line 7, field "chunks\.0\.text"/);
    const row = {
      data_source: 'stepwise/judge-rl',
      prompt: [{ role: 'user', content: 'q' }],
      ability: 'stepwise-judge',
      reward_model: { style: 'rule', ground_truth: 'Positive' },
      extra_info: { split: 'train', index: 0, id: 'a', chunk_index: 0, signal: 'abs-q', question: 'q' },
    };
    expect(parseRecord(VerlRowSchema, { file: 'J.parquet', line: 1 }, row)).toEqual(row);
    expect(() =>
      parseRecord(
        VerlRowSchema,
        { file: 'J.parquet', line: 2 },
        { ...row, extra_info: { ...row.extra_info, x: 1 } },
      ),
    ).toThrow(/J\.parquet, line 2, field "extra_info"/);
  });

  it('a line of another known kind is named as such', () => {
    expect(() =>
      parseRecord(
        LabelRowSchema,
        { file: 'S.jsonl', line: 1 },
        { id: 'a', question: 'q', samples: [] },
        {
          kinds: ['label'],
          who: 'export --task prm',
        },
      ),
    ).toThrow(
      'S.jsonl, line 1: this is `stepwise sample` output; export --task prm needs `stepwise label` output',
    );
  });
});
