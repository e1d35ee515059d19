import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { exportTrainingData, TASK_FORMATS } from '../../src/train/export.js';
import { sampleRows } from './export-fixtures.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

/**
 * Export as two tables (issue 29 item 5): task exporters make neutral records of a kind, formats map
 * each kind they know to a row, and which formats a task has is read off the tables.
 */
describe('export: task exporters × format row-mappers', () => {
  it('a task has exactly the formats with a mapper for its record kind', () => {
    expect(TASK_FORMATS).toEqual({
      'judge-rl': ['verl', 'openrlhf', 'trl'],
      prm: ['openrlhf', 'trl', 'mathshepherd'],
      sorm: ['openrlhf', 'trl', 'mathshepherd'],
      selfseg: ['verl', 'openrlhf', 'trl'],
      // Pairs of one kind, so the verl SFT mapper selfseg had writes global refinement too.
      'refine-global': ['verl', 'openrlhf', 'trl'],
      'refine-local': ['openrlhf', 'trl'],
    });
  });

  it('refine-global as verl: the same pairs as the TRL rows, in the columns of verl SFT', async () => {
    const dir = tempDir('stepwise-export-tables-');
    const samples = writeJsonlFile(dir, 'samples.jsonl', sampleRows(30));
    const trlOut = join(dir, 'g.jsonl');
    const verlOut = join(dir, 'g.parquet');
    const trl = await exportTrainingData({
      from: samples,
      task: 'refine-global',
      format: 'trl',
      out: trlOut,
      seed: 4,
    });
    const verl = await exportTrainingData({
      from: samples,
      task: 'refine-global',
      format: 'verl',
      out: verlOut,
      seed: 4,
    });
    expect(verl.rows).toBe(trl.rows);
    expect(verl.rows).toBeGreaterThan(3);
    const want = readFileSync(trlOut, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            id: string;
            prompt: Array<{ role: string; content: string }>;
            completion: Array<{ content: string }>;
          },
      );
    const buf = readFileSync(verlOut);
    const got = (await parquetReadObjects({
      file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
    })) as Array<{
      id: string;
      messages: Array<{ role: string; content: string }>;
      question: string;
      answer: string;
    }>;
    expect(got.map((r) => r.id)).toEqual(want.map((r) => r.id));
    got.forEach((r, i) => {
      const w = want[i];
      expect(r.messages).toEqual([...w.prompt, { role: 'assistant', content: w.completion[0].content }]);
      expect(r.question).toBe(w.prompt.at(-1)?.content);
      expect(r.answer).toBe(w.completion[0].content);
    });
  });

  it('a task without a mapper in the format is refused, naming the formats it has', async () => {
    const dir = tempDir('stepwise-export-tables-');
    const samples = writeJsonlFile(dir, 'samples.jsonl', sampleRows(3));
    await expect(
      exportTrainingData({
        from: samples,
        task: 'refine-global',
        format: 'mathshepherd',
        out: join(dir, 'x.jsonl'),
      }),
    ).rejects.toThrow(
      'task refine-global cannot be written as mathshepherd; formats for refine-global: verl, openrlhf, trl',
    );
  });
});
