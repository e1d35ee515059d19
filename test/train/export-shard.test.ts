import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inShard } from '../../src/jobs/run-job.js';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { type ExportOptions, exportTrainingData } from '../../src/train/export.js';
import { BIN } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { labelRows, selfsegRows } from './export-fixtures.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

const QWEN_TEMPLATE = sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja');
const chatTemplate = loadChatTemplate(QWEN_TEMPLATE);

const dir = tempDir('stepwise-export-shard-');
const env = { ...process.env, STEPWISE_HOME: dir, STEPWISE_QUIET: '1' };
const inputRows = labelRows(300) as Array<{ id: string }>;
const labels = writeJsonlFile(dir, 'labels.jsonl', inputRows);
const inputOrder = new Map(inputRows.map((r, i) => [r.id, i]));
const lines = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean);
const rowsOf = (p: string) => lines(p).map((l) => JSON.parse(l) as Record<string, unknown>);
const N = 3;
const shards = [1, 2, 3].map((index) => ({ index, count: N }));

function cli(args: string[]) {
  return spawnSync('node', [BIN, ...args], { env, encoding: 'utf8' });
}

/** The unsharded export and its N parts of the same settings. */
async function parts(name: string, o: Omit<ExportOptions, 'out' | 'shard'>) {
  const whole = join(dir, `${name}.jsonl`);
  await exportTrainingData({ ...o, out: whole });
  const files: string[] = [];
  const summaries = [];
  for (const shard of shards) {
    const out = join(dir, `${name}.part-${shard.index}.jsonl`);
    summaries.push(await exportTrainingData({ ...o, out, shard }));
    files.push(out);
  }
  return { whole, files, summaries };
}

function merge(files: string[], out: string, input?: string) {
  const r = cli(['merge', ...files, ...(input ? ['--input', input] : []), '--out', out, '--json']);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { records: number; duplicates: number; missing: number };
}

describe('export --shard K/N', () => {
  it('the CLI writes part K of N by the hash of each record id and says so', () => {
    const out = join(dir, 'cli-part.jsonl');
    const r = cli([
      'export',
      '--input',
      labels,
      '--task',
      'prm',
      '--format',
      'trl',
      '--shard',
      '2/3',
      '--out',
      out,
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/rows as trl \(signal abs-q\), part 2\/3$/m);
    expect(JSON.parse(r.stdout).shard).toBe('2/3');
    const ids = rowsOf(out).map((x) => x.id as string);
    expect(ids.length).toBeGreaterThan(50);
    for (const id of ids) expect(inShard(id, { index: 2, count: 3 })).toBe(true);
    expect(
      cli(['export', '--input', labels, '--task', 'prm', '--format', 'trl', '--shard', '4/3', '--out', out])
        .status,
    ).toBe(2);
  });

  it('without balancing (prm, judge-rl --no-balance, refine-local), the merged parts equal the unsharded export line for line', async () => {
    const cases: Array<[string, Omit<ExportOptions, 'out' | 'shard'>]> = [
      ['prm', { from: labels, task: 'prm', format: 'trl' }],
      ['prm-openrlhf', { from: labels, task: 'prm', format: 'openrlhf' }],
      ['judge-nobalance', { from: labels, task: 'judge-rl', format: 'trl', noBalance: true }],
      ['local', { from: labels, task: 'refine-local', format: 'openrlhf', signal: 'abs-q', chatTemplate }],
    ];
    for (const [name, o] of cases) {
      const { whole, files, summaries } = await parts(name, o);
      const total = summaries.reduce((a, s) => a + s.rows, 0);
      expect(total, name).toBe(lines(whole).length);
      const merged = join(dir, `${name}.merged.jsonl`);
      const m = merge(files, merged, labels);
      expect(m.duplicates, name).toBe(0);
      expect(readFileSync(merged, 'utf8'), name).toBe(readFileSync(whole, 'utf8'));
    }
  });

  it('judge-rl and sorm balance within each part: every part is 50/50 (per prefix length for sorm), so the merged set is too', async () => {
    const judge = await parts('judge', { from: labels, task: 'judge-rl', format: 'trl', seed: 5 });
    for (const [k, file] of judge.files.entries()) {
      const rows = rowsOf(file);
      const pos = rows.filter((r) => r.label === 'Positive').length;
      expect(pos * 2, `part ${k + 1}`).toBe(rows.length);
      expect(judge.summaries[k].stats).toMatchObject({ positives: pos, negatives: pos });
      for (const r of rows) expect(inShard((r.id as string).replace(/\/\d+$/, ''), shards[k])).toBe(true);
    }
    const merged = join(dir, 'judge.merged.jsonl');
    merge(judge.files, merged, labels);
    const ids = rowsOf(merged).map((r) => r.id as string);
    // In input order: by solution, then chunk.
    const place = (id: string) => {
      const [, sol, i] = /^(.*)\/(\d+)$/.exec(id)!;
      return inputOrder.get(sol)! * 100 + Number(i);
    };
    expect(ids.map(place)).toEqual([...ids.map(place)].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);

    const sorm = await parts('sorm', { from: labels, task: 'sorm', format: 'trl' });
    for (const file of sorm.files) {
      const byLength = new Map<number, number>();
      for (const r of rowsOf(file)) {
        const labelsOf = r.labels as boolean[];
        const k = labelsOf.length;
        byLength.set(k, (byLength.get(k) ?? 0) + (labelsOf[k - 1] ? 1 : -1));
      }
      for (const [k, balance] of byLength) expect(balance, `prefix length ${k}`).toBe(0);
    }
    const sormMerged = join(dir, 'sorm.merged.jsonl');
    const m = merge(sorm.files, sormMerged, labels);
    expect(m.records).toBe(sorm.summaries.reduce((a, s) => a + s.rows, 0));
  });

  it('selfseg parts merge to the unsharded rows (in input order)', async () => {
    const from = writeJsonlFile(dir, 'selfseg-in.jsonl', selfsegRows(60));
    const { whole, files } = await parts('selfseg', { from, task: 'selfseg', format: 'trl' });
    const merged = join(dir, 'selfseg.merged.jsonl');
    merge(files, merged, from);
    expect(lines(merged).sort()).toEqual(lines(whole).sort());
  });

  it('merge refuses what it cannot join, saying what to do instead (exit 2)', async () => {
    const ms = await parts('ms', { from: labels, task: 'prm', format: 'mathshepherd' });
    const r = cli(['merge', ...ms.files, '--out', join(dir, 'ms.merged.jsonl')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/ms\.part-1\.jsonl, line 1, field "id".*Math-Shepherd row .*no id.*cat part-/);
    const pq: string[] = [];
    for (const shard of shards) {
      const out = join(dir, `judge.part-${shard.index}.parquet`);
      await exportTrainingData({ from: labels, task: 'judge-rl', format: 'verl', out, shard });
      pq.push(out);
    }
    const p = cli(['merge', ...pq, '--out', join(dir, 'judge.merged.parquet')]);
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/judge\.part-1\.parquet is a Parquet file .*data\.train_files=/);
    expect(p.stderr).not.toMatch(/\n\s+at /);
  });

  it('an input that changes while export reads it is refused, and no half-written output is left', async () => {
    const from = writeJsonlFile(dir, 'growing.jsonl', inputRows.slice(0, 40));
    const out = join(dir, 'growing.out.jsonl');
    let appended = false;
    await expect(
      exportTrainingData({
        from,
        task: 'refine-local',
        format: 'openrlhf',
        out,
        signal: 'abs-q',
        chatTemplate,
        findContinuation: async () => {
          if (!appended) appendFileSync(from, `${JSON.stringify(inputRows[50])}\n`);
          appended = true;
          return 'continued';
        },
      }),
    ).rejects.toThrow(/growing\.jsonl: the file changed while export was reading it/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('growing.out'))).toEqual([]);
  });

  it('bad records name file, line and field, before anything is written', async () => {
    const rows = [
      { id: 'a', question: 'Q a', samples: [{ text: 'x', correct: false }] },
      { id: 'b', samples: [{ text: 'y', correct: true }] },
    ];
    const from = writeJsonlFile(dir, 'bad-samples.jsonl', rows);
    const out = join(dir, 'bad-samples.out.jsonl');
    const r = cli(['export', '--input', from, '--task', 'refine-global', '--format', 'trl', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /bad-samples\.jsonl, line 2, field "question": b has neither "question" nor "problem"/,
    );
    expect(existsSync(out)).toBe(false);
    const badLabel = writeJsonlFile(dir, 'bad-labels.jsonl', [
      inputRows[0],
      { ...inputRows[1], chunks: [{ text: 1, labels: {} }] },
    ]);
    const l = cli([
      'export',
      '--input',
      badLabel,
      '--task',
      'judge-rl',
      '--format',
      'verl',
      '--out',
      `${out}.parquet`,
    ]);
    expect(l.status).toBe(2);
    expect(l.stderr).toMatch(/bad-labels\.jsonl, line 2, field "chunks\.0\.text"/);
    expect(existsSync(`${out}.parquet`)).toBe(false);
    // Found while writing (a bad solution without its gold answer): still named, and no output left.
    const bad0 = inputRows[0] as unknown as {
      answer?: string;
      chunks: Array<{ labels: Record<string, unknown> }>;
    };
    const { answer: _, ...noAnswer } = {
      ...bad0,
      chunks: bad0.chunks.map((c) => ({ ...c, labels: { ...c.labels, sorm: false } })),
    };
    const noGold = writeJsonlFile(dir, 'no-gold.jsonl', [inputRows[3], noAnswer]);
    const g = cli([
      'export',
      '--input',
      noGold,
      '--task',
      'refine-local',
      '--format',
      'openrlhf',
      '--chat-template',
      QWEN_TEMPLATE,
      '--out',
      out,
    ]);
    expect(g.status).toBe(2);
    expect(g.stderr).toMatch(/no-gold\.jsonl, line 2, field "answer": solution q0#0 has no gold answer/);
    expect(readdirSync(dir).filter((f) => f.startsWith('bad-samples.out'))).toEqual([]);
  });
});
