import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProcessBenchSamples, scanProcessBenchSamples } from '../../src/evaluate/processbench.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/** `eval processbench` reads its samples as it goes: the same samples, in the same order, as loading them whole. */

async function idsOf(samples: { read(): AsyncIterable<{ id: string }> }): Promise<string[]> {
  const ids: string[] = [];
  for await (const s of samples.read()) ids.push(s.id);
  return ids;
}

describe('ProcessBench samples read a record at a time', () => {
  it('the four subsets, whole and with --limit: the samples loadProcessBenchSamples picks (both classes spread)', async () => {
    const path = sharedData('processbench');
    for (const limit of [undefined, 1, 7]) {
      const whole = (await loadProcessBenchSamples({ path, limit })).map((s) => s.id);
      const scanned = await scanProcessBenchSamples({ path, limit });
      expect(await idsOf(scanned), `limit ${limit}`).toEqual(whole);
      expect(scanned.count).toBe(whole.length);
      expect(scanned.subsets).toEqual(['gsm8k', 'math', 'olympiadbench', 'omnimath']);
    }
    const two = await scanProcessBenchSamples({ path, subsets: ['math', 'gsm8k'], limit: 5 });
    expect(await idsOf(two)).toEqual(
      (await loadProcessBenchSamples({ path, subsets: ['math', 'gsm8k'], limit: 5 })).map((s) => s.id),
    );
  });

  it('one JSONL file: the same picks, an id twice refused before any work, check sees the samples kept', async () => {
    const dir = tempDir('stepwise-pb-stream-');
    const file = join(dir, 'mine.jsonl');
    const row = (i: number, label: number) =>
      JSON.stringify({
        id: `s${i}`,
        generator: 'g',
        problem: `What is ${i}?`,
        steps: ['a', 'b', 'c'],
        final_answer_correct: label === -1,
        label,
      });
    // Classes in runs, so a plain stride would miss one.
    const rows = Array.from({ length: 300 }, (_, i) => row(i, Math.floor(i / 40) % 3 === 0 ? -1 : i % 3));
    writeFileSync(file, `${rows.join('\n')}\n`);
    for (const limit of [undefined, 3, 10, 299]) {
      const seen: string[] = [];
      const scanned = await scanProcessBenchSamples({ path: file, limit }, (s) => seen.push(s.id));
      const whole = (await loadProcessBenchSamples({ path: file, limit })).map((s) => s.id);
      expect(await idsOf(scanned)).toEqual(whole);
      expect(seen).toEqual(whole);
    }
    expect((await scanProcessBenchSamples({ path: file, subsets: ['gsm8k'] })).count).toBe(0);
    writeFileSync(file, `${[...rows, row(7, -1)].join('\n')}\n`);
    await expect(scanProcessBenchSamples({ path: file })).rejects.toThrow(/sample id s7 appears twice/);
  });
});
