import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ChunkJudgmentRowSchema,
  CodeLabelRowSchema,
  LabelInputRowSchema,
  LabelOutputRowSchema,
  LabelRowSchema,
  PredictionOutputRowSchema,
  parseRecord,
  SampleOutputRowSchema,
  SampleRowSchema,
  SearchOutputRowSchema,
  SegmentOutputRowSchema,
  SegmentRowSchema,
  SelectOutputRowSchema,
} from '../../src/data/record-kinds.js';
import { startTaggingServer } from '../segment/tagging-server.js';
import { BIN, startCli } from '../support/cli.js';
import { firstRow } from '../support/settings-probe.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * One declaration per record kind (issue 29 item 5): a writer's row type is `z.infer` of its
 * kind's strict schema in src/data/record-kinds.ts, so a field the writer adds without the schema
 * fails typecheck where the row is built, and a field the job machinery adds on the way out
 * (`job`, `madeFrom`, `simulated`) fails here: every line a small real run writes (simulated
 * world; label-code on two MBPP problems in the sandbox) is read back and checked against its
 * strict schema, and against the loose schema the
 * readers of that kind use.
 */
/** The tagging server `segment --segmentation llm` asks (started before the runs). */
let segmentServer = '';

const KINDS: Array<{
  out: string;
  /** The rows' file, when it is not `out`. */
  rows?: string;
  args: (dir: string) => string[];
  strict: z.ZodType;
  reader?: z.ZodType;
  /** Whether the rows carry their job's settings (label-code's rows are TRL's and export's, nothing more). */
  job?: false;
}> = [
  {
    out: 'S.jsonl',
    args: () => ['sample', '--dataset', 'sim', '--limit', '3', '--policy', 'sim', '--n', '2'],
    strict: SampleOutputRowSchema,
    reader: SampleRowSchema,
  },
  {
    out: 'S-tags.jsonl',
    args: () => [
      'sample',
      '--dataset',
      'sim',
      '--limit',
      '3',
      '--policy',
      'sim',
      '--n',
      '2',
      '--segmentation',
      'tags',
    ],
    strict: SampleOutputRowSchema,
    reader: SampleRowSchema,
  },
  {
    out: 'P.jsonl',
    args: (dir) => ['select', '--input', join(dir, 'S.jsonl'), '--judge', 'sim:generative', '--seed', '3'],
    strict: SelectOutputRowSchema,
  },
  {
    out: 'L.jsonl',
    args: (dir) => [
      'label',
      '--input',
      join(dir, 'S.jsonl'),
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--rollouts',
      '2',
    ],
    strict: LabelOutputRowSchema,
    reader: LabelRowSchema,
  },
  {
    out: 'L-kept.jsonl',
    args: (dir) => [
      'label',
      '--input',
      join(dir, 'S.jsonl'),
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--rollouts',
      '2',
      '--keep-rollouts',
      '--search',
      'binary',
      '--signals',
      'abs-q,ms-hard,sorm',
    ],
    strict: LabelOutputRowSchema,
    reader: LabelRowSchema,
  },
  {
    out: 'L-tags.jsonl',
    args: (dir) => [
      'label',
      '--input',
      join(dir, 'S-tags.jsonl'),
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--rollouts',
      '2',
      '--segmentation',
      'tags',
    ],
    strict: LabelOutputRowSchema,
    reader: LabelRowSchema,
  },
  {
    out: 'R.jsonl',
    args: () => [
      'search',
      '--dataset',
      'sim',
      '--limit',
      '2',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'chunk-reset',
    ],
    strict: SearchOutputRowSchema,
  },
  {
    out: 'R-greedy.jsonl',
    args: () => [
      'search',
      '--dataset',
      'sim',
      '--limit',
      '2',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'greedy-prm',
    ],
    strict: SearchOutputRowSchema,
  },
  {
    out: 'R-best.jsonl',
    args: () => [
      'search',
      '--dataset',
      'sim',
      '--limit',
      '2',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'best-of-n',
    ],
    strict: SearchOutputRowSchema,
  },
  {
    // --out E.json writes its predictions beside it, to E.predictions.jsonl.
    out: 'E.json',
    rows: 'E.predictions.jsonl',
    args: () => [
      'eval',
      'processbench',
      '--judge',
      'critic:sim',
      '--sim-guess',
      '--path',
      sharedData('processbench'),
      '--limit',
      '2',
    ],
    strict: PredictionOutputRowSchema,
  },
  {
    out: 'C.jsonl',
    args: () => ['label-code', '--dataset', 'mbpp', '--path', sharedData('mbpp/mbpp.jsonl'), '--limit', '2'],
    strict: CodeLabelRowSchema,
    reader: LabelRowSchema,
    job: false,
  },
  {
    // --out X.json writes its per-chunk rows beside it, to X.chunks.jsonl.
    out: 'X.json',
    rows: 'X.chunks.jsonl',
    args: (dir) => [
      'eval',
      'chunks',
      '--input',
      join(dir, 'L.jsonl'),
      '--judge',
      'sim:generative',
      '--signal',
      'abs-q',
    ],
    strict: ChunkJudgmentRowSchema,
    job: false,
  },
  {
    out: 'G.jsonl',
    args: (dir) => [
      'segment',
      '--segmentation',
      'llm',
      '--model',
      'openai:m',
      '--base-url',
      segmentServer,
      '--input',
      join(dir, 'texts.jsonl'),
    ],
    strict: SegmentOutputRowSchema,
    reader: SegmentRowSchema,
  },
];

describe('every row a writer writes is its kind’s strict schema', () => {
  const dir = tempDir('stepwise-record-kinds-');
  const ran: Record<string, { code: number | null; stderr: string }> = {};
  let closeServer = async () => {};
  afterAll(() => closeServer());
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    const server = await startTaggingServer({ alterEvery: 2 });
    closeServer = () => server.close();
    segmentServer = server.url;
    const texts = [
      { id: 't1', problem: 'What is 2 + 3?', text: 'First, 2 + 3 = 5.\n\nSo the answer is 5.' },
      { id: 't2', problem: 'What is 4 * 2?', text: 'We multiply. 4 * 2 = 8. The answer is 8.' },
    ];
    writeFileSync(join(dir, 'texts.jsonl'), texts.map((t) => `${JSON.stringify(t)}\n`).join(''));
    for (const { out, args } of KINDS)
      ran[out] = await startCli([...args(dir), '--out', join(dir, out)], join(dir, 'home')).done;
  }, 120_000);

  for (const { out, rows, args, strict, reader, job } of KINDS)
    it(`${args(dir)[0]} → ${out}`, () => {
      expect(ran[out]?.code, ran[out]?.stderr).toBe(0);
      const file = join(dir, rows ?? out);
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      lines.forEach((text, i) => {
        const row = JSON.parse(text) as Record<string, unknown>;
        if (job !== false) expect(row.job).toBeDefined();
        parseRecord(strict, { file, line: i + 1 }, row);
        if (reader) parseRecord(reader, { file, line: i + 1 }, row);
      });
    });

  it('label reads sample output through its input kind’s schema, broader than SampleRowSchema', () => {
    const file = join(dir, 'S.jsonl');
    const rows = readFileSync(file, 'utf8').trimEnd().split('\n');
    rows.forEach((text, i) => {
      parseRecord(LabelInputRowSchema, { file, line: i + 1 }, JSON.parse(text));
    });
    const where = { file: 'in.jsonl', line: 3 };
    // `correct` absent, `text` left out where chunks are given.
    parseRecord(LabelInputRowSchema, where, {
      id: 'a',
      answer: '1',
      samples: [{ chunks: ['x', { text: 'y' }] }],
    });
    expect(() => parseRecord(LabelInputRowSchema, where, { answer: '1', steps: ['x'] })).toThrow(
      'in.jsonl, line 3, field "id": missing id',
    );
    expect(() => parseRecord(LabelInputRowSchema, where, { id: 'a', samples: [{ correct: true }] })).toThrow(
      'field "samples.0.text": missing sample text',
    );
  });

  it('a field the schema does not declare fails, naming file, line and field', () => {
    const file = join(dir, 'S.jsonl');
    const row = firstRow<Record<string, unknown>>(file);
    expect(() => parseRecord(SampleOutputRowSchema, { file, line: 1 }, { ...row, extra: 1 })).toThrow(
      /line 1/,
    );
    const { gold: _gold, ...noGold } = row;
    expect(() => parseRecord(SampleOutputRowSchema, { file, line: 1 }, noGold)).toThrow(/gold/);
  });

  it('select reads sample rows through the same schema: a bad field is named with file and line', async () => {
    const file = join(dir, 'bad-samples.jsonl');
    const good = { id: 'sim/0/0', question: 'q', samples: [{ text: 'a', correct: true, chunks: ['a'] }] };
    const bad = { id: 'sim/0/1', question: 'q', samples: [{ text: 'a', correct: 'yes' }] };
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`);
    const args = [
      'select',
      '--input',
      file,
      '--judge',
      'sim:generative',
      '--sim-guess',
      '--out',
      join(dir, 'bad.jsonl'),
    ];
    const run = await startCli(args, join(dir, 'home')).done;
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`${file}, line 2, field "samples.0.correct"`);
  }, 60_000);
});
