import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';
import { exportTrainingData } from '../../src/train/export.js';
import { tempDir, writeJsonlFile } from './fixtures.js';

const dir = tempDir();
const text = 'We have 3 apples.\n\nThen 3 + 4 = 7. So the answer is \\boxed{7}.';
// `stepwise segment --by llm` rows: one segmented by the LLM, one that fell back to paragraphs.
const segmented = writeJsonlFile(dir, 'segmented.jsonl', [
  {
    id: 'a',
    problem: 'How many?',
    text,
    chunks: [
      { text: 'We have 3 apples.', span: { start: 0, end: 17 } },
      { text: 'Then 3 + 4 = 7.', span: { start: 19, end: 34 } },
      { text: 'So the answer is \\boxed{7}.', span: { start: 35, end: text.length } },
    ],
    method: 'llm',
    attempts: 2,
  },
  {
    id: 'b',
    problem: 'How many?',
    text,
    chunks: [
      { text: 'We have 3 apples.', span: { start: 0, end: 17 } },
      { text: 'Then 3 + 4 = 7. So the answer is \\boxed{7}.', span: { start: 19, end: text.length } },
    ],
    method: 'paragraph',
    attempts: 3,
  },
]);
const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('export --task selfseg from LLM-segmented solutions', () => {
  it('TRL: the tags policy prompt → the solution in its chunks, tags around the spans; fallbacks left out', async () => {
    const out = join(dir, 'selfseg.trl.jsonl');
    const s = await exportTrainingData({ from: segmented, task: 'selfseg', format: 'trl', out });
    expect(s.rows).toBe(1);
    expect(s.stats).toMatchObject({ inputs: 2, paragraphFallbacks: 1, rejected: 0 });
    const [row] = readJsonl(out);
    expect(row.id).toBe('a');
    expect(row.completion[0].content).toBe(
      '<chunk>We have 3 apples.</chunk>\n\n<chunk>Then 3 + 4 = 7.</chunk> <chunk>So the answer is \\boxed{7}.</chunk>',
    );
    // The prompt is the one `--segmentation tags` sends, so the tuned policy is asked what it learned.
    expect(parsePolicyPrompt(row.prompt)).toEqual({
      question: 'How many?',
      prefix: '',
      segmentation: 'tags',
    });
  });

  it("verl: Parquet with the columns both of verl's SFT trainers read by default (fixture from verl's source)", async () => {
    const fixture = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', 'fixtures', 'peers', 'verl-sft.json'), 'utf8'),
    ) as { trainers: Array<{ entry: string; columns: Record<string, string> }> };
    const out = join(dir, 'selfseg.parquet');
    const s = await exportTrainingData({ from: segmented, task: 'selfseg', format: 'verl', out });
    expect(s.rows).toBe(1);
    const table = arrow.tableFromIPC(readParquet(new Uint8Array(readFileSync(out))).intoIPCStream());
    const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
    for (const t of fixture.trainers)
      for (const [column, kind] of Object.entries(t.columns))
        expect(types[column], `${t.entry} reads ${column}`).toBe(
          kind === 'string' ? 'Utf8' : 'List<Struct<{role:Utf8, content:Utf8}>>',
        );
    const buf = readFileSync(out);
    const [row] = (await parquetReadObjects({
      file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
    })) as Array<{
      id: string;
      messages: Array<{ role: string; content: string }>;
      question: string;
      answer: string;
    }>;
    expect(row.id).toBe('a');
    const messages = row.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages[0].content).toBe(row.question);
    expect(messages[1].content).toBe(row.answer);
    expect(row.answer.replace(/<\/?chunk>/g, '')).toBe(text);
    expect(parsePolicyPrompt(`${row.question}\n\nSolution:\n`)?.segmentation).toBe('tags');
  });

  it('a chunk whose text is not its span of the text is refused, naming line and field', async () => {
    const bad = writeJsonlFile(dir, 'bad.jsonl', [
      {
        id: 'x',
        problem: 'P',
        text: 'abc def',
        chunks: [{ text: 'abd', span: { start: 0, end: 3 } }],
        method: 'llm',
        attempts: 1,
      },
    ]);
    await expect(
      exportTrainingData({ from: bad, task: 'selfseg', format: 'trl', out: join(dir, 'bad.out.jsonl') }),
    ).rejects.toThrow(/line 1, field "chunks\.0\.span"/);
  });
});
