import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { type ExportOptions, exportTrainingData } from '../../src/train/export.js';
import { ROW_GROUP_ROWS } from '../../src/train/verl.js';
import { sharedData } from '../support/shared-data.js';
import { labelRows, sampleRows, selfsegRows } from './export-fixtures.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

/**
 * `stepwise export` keeps writing what it wrote before it streamed: for every task and format (and
 * the settings that change what is kept — balance, seed, length filter, signal, keys), the output's
 * SHA-256 and the summary equal the ones recorded in export-golden.json, which were produced by the
 * in-memory export (commit before the streaming one). Parquet is also compared by content (its rows
 * read back); a Parquet file of more than 1,000 rows by content and row groups only (see below).
 * `UPDATE_EXPORT_GOLDEN=1` rewrites the record (only to be done knowingly).
 */

const GOLDEN = join(import.meta.dirname, 'export-golden.json');
const dir = tempDir('stepwise-export-golden-');

const labels = writeJsonlFile(dir, 'labels.jsonl', labelRows(400));
const simLabels = writeJsonlFile(dir, 'labels-sim.jsonl', labelRows(60, { simulated: true }));
const longLabels = writeJsonlFile(dir, 'labels-long.jsonl', labelRows(200, { long: true }));
const bigLabels = writeJsonlFile(dir, 'labels-big.jsonl', labelRows(900));
// Without `sorm`: sorm and refine-local fall back to an equivalent signal.
const noSorm = writeJsonlFile(
  dir,
  'labels-nosorm.jsonl',
  labelRows(80).map((r) => {
    const row = r as { chunks: Array<{ labels: Record<string, unknown> }> };
    return {
      ...row,
      chunks: row.chunks.map((c) => ({
        ...c,
        labels: Object.fromEntries(Object.entries(c.labels).filter(([k]) => k !== 'sorm')),
      })),
    };
  }),
);
const samples = writeJsonlFile(dir, 'samples.jsonl', sampleRows(120));
const selfseg = writeJsonlFile(dir, 'selfseg.jsonl', selfsegRows(90));
const chatTemplate = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));
const findContinuation: ExportOptions['findContinuation'] = async (question, gold, prefix) =>
  prefix.chunks.length % 3 === 2
    ? null
    : `continue ${question.length} ${prefix.text.length} \\boxed{${gold}}`;

type Case = Omit<ExportOptions, 'out'>;
const CASES: Record<string, Case> = {
  'judge-rl.verl': { from: labels, task: 'judge-rl', format: 'verl', seed: 3 },
  'judge-rl.openrlhf': { from: labels, task: 'judge-rl', format: 'openrlhf', signal: 'rel-effective' },
  'judge-rl.trl': { from: labels, task: 'judge-rl', format: 'trl', seed: 11 },
  'judge-rl.trl.no-balance': { from: labels, task: 'judge-rl', format: 'trl', noBalance: true },
  'judge-rl.trl.soft': { from: labels, task: 'judge-rl', format: 'trl', signal: 'ms-soft', seed: 5 },
  'judge-rl.trl.sim': { from: simLabels, task: 'judge-rl', format: 'trl' },
  'judge-rl.trl.too-long': { from: longLabels, task: 'judge-rl', format: 'trl', maxPromptTokens: 400 },
  'judge-rl.verl.too-long': {
    from: longLabels,
    task: 'judge-rl',
    format: 'verl',
    maxPromptTokens: 400,
    dataSource: 'mine',
    split: 'test',
  },
  'judge-rl.verl.big': { from: bigLabels, task: 'judge-rl', format: 'verl', noBalance: true },
  'prm.trl': { from: labels, task: 'prm', format: 'trl', signal: 'abs-q' },
  'prm.mathshepherd': { from: labels, task: 'prm', format: 'mathshepherd' },
  'prm.openrlhf': { from: labels, task: 'prm', format: 'openrlhf', promptKey: 'q', labelKey: 'y' },
  'prm.trl.sim': { from: simLabels, task: 'prm', format: 'trl' },
  'sorm.trl': { from: labels, task: 'sorm', format: 'trl' },
  'sorm.trl.seed': { from: labels, task: 'sorm', format: 'trl', seed: 9 },
  'sorm.mathshepherd': { from: labels, task: 'sorm', format: 'mathshepherd', seed: 2 },
  'sorm.openrlhf': { from: labels, task: 'sorm', format: 'openrlhf', signal: 'abs-q' },
  'sorm.trl.no-sorm': { from: noSorm, task: 'sorm', format: 'trl' },
  'sorm.trl.sim': { from: simLabels, task: 'sorm', format: 'trl' },
  'selfseg.trl': { from: selfseg, task: 'selfseg', format: 'trl' },
  'selfseg.verl': { from: selfseg, task: 'selfseg', format: 'verl' },
  'selfseg.openrlhf': { from: selfseg, task: 'selfseg', format: 'openrlhf', promptKey: 'in' },
  'refine-global.trl': { from: samples, task: 'refine-global', format: 'trl', seed: 4 },
  'refine-global.openrlhf': { from: samples, task: 'refine-global', format: 'openrlhf' },
  'refine-local.openrlhf': {
    from: labels,
    task: 'refine-local',
    format: 'openrlhf',
    findContinuation,
    chatTemplate,
  },
  'refine-local.openrlhf.kept-only': {
    from: labels,
    task: 'refine-local',
    format: 'openrlhf',
    signal: 'abs-q',
    chatTemplate,
  },
  'refine-local.trl': { from: labels, task: 'refine-local', format: 'trl', findContinuation, chatTemplate },
  'refine-local.trl.no-sorm': {
    from: noSorm,
    task: 'refine-local',
    format: 'trl',
    findContinuation,
    chatTemplate,
  },
};

interface Golden {
  sha256: string;
  bytes: number;
  /** Parquet only: SHA-256 of the rows read back (JSON, bigints as numbers). */
  rows?: string;
  summary: unknown;
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const asArrayBuffer = (bytes: Buffer) =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

async function parquetRowsHash(bytes: Buffer): Promise<string> {
  const rows = await parquetReadObjects({ file: asArrayBuffer(bytes) });
  return sha(JSON.stringify(rows, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)));
}

async function run(name: string, c: Case): Promise<Golden> {
  const out = join(dir, `${name}.${c.format === 'verl' ? 'parquet' : 'jsonl'}`);
  const { out: _, ...summary } = await exportTrainingData({ ...c, out });
  const bytes = readFileSync(out);
  return {
    sha256: sha(bytes),
    bytes: bytes.length,
    ...(c.format === 'verl' ? { rows: await parquetRowsHash(bytes) } : {}),
    summary,
  };
}

describe('export writes what the in-memory export wrote', () => {
  if (process.env.UPDATE_EXPORT_GOLDEN === '1') {
    it('records the outputs', async () => {
      const record: Record<string, Golden> = {};
      for (const [name, c] of Object.entries(CASES)) record[name] = await run(name, c);
      writeFileSync(GOLDEN, `${JSON.stringify(record, null, 2)}\n`);
    });
    return;
  }
  const golden = existsSync(GOLDEN)
    ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, Golden>)
    : {};
  it('has a record for every case', () => {
    expect(Object.keys(golden).sort()).toEqual(Object.keys(CASES).sort());
  });
  for (const [name, c] of Object.entries(CASES)) {
    it(name, async () => {
      const got = await run(name, c);
      const want = golden[name];
      expect(got.summary).toEqual(want.summary);
      if (want.rows) expect(got.rows).toBe(want.rows);
      const rows = (want.summary as { rows: number }).rows;
      if (c.format === 'verl' && rows > ROW_GROUP_ROWS) {
        // The one change: a Parquet file of more than 1,000 rows was one group of 1,000 and then
        // groups of 100,000 (held in memory to encode); now every group is at most 1,000 rows (and
        // ~1 MB of text, which these short rows do not reach).
        const out = join(dir, `${name}.parquet`);
        const groups = (await parquetMetadataAsync(asArrayBuffer(readFileSync(out)))).row_groups;
        expect(groups.map((g) => Number(g.num_rows))).toEqual(
          Array.from({ length: Math.ceil(rows / ROW_GROUP_ROWS) }, (_, i) =>
            Math.min(ROW_GROUP_ROWS, rows - i * ROW_GROUP_ROWS),
          ),
        );
        return;
      }
      expect(got.sha256).toBe(want.sha256);
      expect(got.bytes).toBe(want.bytes);
    });
  }
});
