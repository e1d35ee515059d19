import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/rng.js';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { type ExportOptions, exportTrainingData } from '../../src/train/export.js';
import { ROW_GROUP_ROWS } from '../../src/train/verl.js';
import { sharedData } from '../support/shared-data.js';
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

/** Label records with varied lengths, first errors, unlabeled tails, soft labels, tags, kept rollouts. */
function labelRows(count: number, options: { simulated?: boolean; long?: boolean } = {}): unknown[] {
  const rng = createRng(`labels-${count}`);
  const rows: unknown[] = [];
  for (let s = 0; s < count; s++) {
    const n = rng.int(1, 6);
    const bad = rng.chance(0.45) ? rng.int(0, n - 1) : -1;
    const unlabeledFrom = rng.chance(0.1) ? rng.int(0, n - 1) : n;
    const tags = s % 7 === 3;
    const chunks = Array.from({ length: n }, (_, i) => {
      const wrong = bad >= 0 && i >= bad;
      const text =
        `Step ${i + 1}: from ${s} we add ${i} to get ${s + i}.` +
        (options.long && rng.chance(0.2) ? ' and then'.repeat(rng.int(50, 400)) : '');
      return {
        text,
        q: wrong ? 0 : 0.5 + rng.next() / 2,
        labels:
          i >= unlabeledFrom
            ? {}
            : {
                'abs-q': !wrong,
                sorm: !wrong || rng.chance(0.1),
                'ms-soft': wrong ? rng.next() / 3 : 0.5 + rng.next() / 2,
                'rel-effective': rng.chance(0.7),
              },
        ...(s % 5 === 0
          ? {
              rollouts: [
                { text: `wrong after ${s}.${i}`, correct: false },
                { text: `right after ${s}.${i} \\boxed{${s + 3}}`, correct: s % 3 !== 0 },
              ],
            }
          : {}),
      };
    });
    rows.push({
      id: `q${Math.floor(s / 3)}#${s % 3}`,
      problem: `Problem ${Math.floor(s / 3)}: what is ${s} + 3?`,
      answer: String(s + 3),
      ...(tags ? { segmentation: 'tags' } : {}),
      ...(s % 5 === 0 ? { emptyPrefixRollouts: [{ text: `scratch ${s}`, correct: s % 2 === 0 }] } : {}),
      chunks,
      firstError: { 'abs-q': bad },
      ...(options.simulated ? { simulated: true } : {}),
    });
  }
  return rows;
}

/** `stepwise sample` rows: K solutions each, some correct, some under tags with a malformed one. */
function sampleRows(count: number): unknown[] {
  const rng = createRng('samples');
  return Array.from({ length: count }, (_, p) => {
    const tags = p % 4 === 1;
    const k = rng.int(1, 6);
    return {
      id: `prob-${p}`,
      ...(p % 6 === 5 ? { problem: `Problem ${p}?` } : { question: `Question ${p}?` }),
      ...(tags ? { segmentation: 'tags' } : {}),
      samples: Array.from({ length: k }, (_, j) => ({
        text: `solution ${p}.${j} \\boxed{${rng.int(0, 3)}}`,
        correct: rng.chance(0.5),
        ...(tags && j === 0 ? { segmentation: 'paragraph', written: `<chunk>torn ${p}` } : {}),
      })),
    };
  });
}

/** selfseg rows: given taggings and `stepwise segment` rows (llm and paragraph), interleaved. */
function selfsegRows(count: number): unknown[] {
  const rng = createRng('selfseg');
  return Array.from({ length: count }, (_, i) => {
    const parts = Array.from({ length: rng.int(1, 4) }, (_, j) => `part ${i}.${j} of the answer`);
    const text = parts.join('\n\n');
    if (i % 3 === 0) {
      const tagged = parts.map((p) => `<chunk>${p}</chunk>`).join('\n\n');
      return { id: `t${i}`, problem: `P${i}`, text, tagged: i % 9 === 0 ? `${tagged}x` : tagged };
    }
    let at = 0;
    const chunks = parts.map((p) => {
      const start = text.indexOf(p, at);
      at = start + p.length;
      return { text: p, span: { start, end: at } };
    });
    return { id: `s${i}`, problem: `P${i}`, text, method: i % 5 === 0 ? 'paragraph' : 'llm', chunks };
  });
}

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
  'refine-local.openrlhf': { from: labels, task: 'refine-local', format: 'openrlhf', findContinuation },
  'refine-local.openrlhf.kept-only': {
    from: labels,
    task: 'refine-local',
    format: 'openrlhf',
    signal: 'abs-q',
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
        // groups of 100,000 (held in memory to encode); now every group is at most 1,000 rows.
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
