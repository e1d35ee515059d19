import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFileKind } from '../../src/core/file-kind.js';
import { kindOfRecord } from '../../src/server/files.js';
import { BIN, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';

describe('file kinds told from their records', () => {
  it('names each stepwise output and data row', () => {
    expect(detectFileKind({ id: 'a', gold: '1', samples: [] })).toBe('sample');
    expect(
      detectFileKind({ id: 'a', chunks: [{ text: 'x', q: 1, labels: { 'abs-q': true } }], firstError: {} }),
    ).toBe('label');
    expect(detectFileKind({ id: 'a', strategy: 'best-of-n', finalText: 'x', chunks: [] })).toBe('search');
    expect(detectFileKind({ id: 'a', chosen: null, outcomeOnly: null })).toBe('select');
    expect(detectFileKind({ id: 'a', problem: 'p', steps: ['s'], label: -1 })).toBe('processbench');
    expect(detectFileKind({ prompt: 'p', completions: ['a'], labels: [true] })).toBe('trl-stepwise');
    expect(detectFileKind({ id: 'a', text: 't', chunks: [], method: 'llm' })).toBe('segment');
    expect(detectFileKind({ id: 'a', prediction: 2 })).toBe('predictions');
    expect(detectFileKind({ id: 'a', problem: 'p', answer: '1', steps: ['s'] })).toBe('solutions');
    expect(detectFileKind({ id: 'a', question: 'q', answer: '1' })).toBe('problems');
    expect(detectFileKind({ id: 'a', text: 't' })).toBe('texts');
    expect(detectFileKind({ gold: '1', pred: '1', equal: true })).toBe('verify-cases');
    expect(detectFileKind({ custom_id: 'x', method: 'POST', url: '/v1/completions', body: {} })).toBe(
      'batch-input',
    );
    expect(detectFileKind({ hello: 1 })).toBeUndefined();
    expect(detectFileKind([1, 2])).toBeUndefined();
  });

  it('names the kinds the web view shows too: one detection for the commands and the server', () => {
    // `eval processbench` writes predictions with the judge's scores and cost beside {id, prediction}.
    const prediction = { id: 'a', subset: 'gsm8k', label: 2, prediction: 1, steps: 4, scores: [1], cost: {} };
    expect(detectFileKind(prediction)).toBe('predictions');
    const judged = { solution: 's', chunk: 0, verdict: 'positive', label: true, q: 1 };
    expect(detectFileKind(judged)).toBe('chunk-judgments');
    expect(detectFileKind({ problem: { id: 'a' }, result: { trace: [] } })).toBe('search');
    // The server's view of each kind (src/server/files.ts), read through core's detection.
    const view = (v: unknown) => kindOfRecord(v, true);
    expect(view({ id: 'a', gold: '1', samples: [] })).toBe('samples');
    expect(view({ id: 'a', chunks: [{ text: 'x', labels: {} }], firstError: {} })).toBe('labels');
    expect(view({ id: 'a', strategy: 'beam', finalText: 'x', chunks: [] })).toBe('search');
    expect(view({ problem: { id: 'a' }, result: { trace: [] } })).toBe('search');
    expect(view(prediction)).toBe('predictions');
    expect(view(judged)).toBe('chunk-judgments');
    expect(view({ id: 'a', chosen: null, outcomeOnly: null, candidates: [] })).toBe('selection');
    expect(view({ id: 'a', problem: 'p', steps: ['s'], label: -1 })).toBe('processbench-set');
    expect(view({ id: 'a', question: 'q', answer: '1' })).toBe('problems');
    expect(view({ id: 'a', problem: 'p', answer: '1', steps: ['s'] })).toBe('problems');
    expect(view({ id: 'a', text: 't' })).toBe('jsonl');
    expect(view({ prompt: 'p', completions: ['a'], labels: [true] })).toBe('jsonl');
    expect(view({ hello: 1 })).toBe('jsonl');
    expect(kindOfRecord({ strategy: 'beam', finalText: 'x', chunks: [] }, false)).toBe('search');
  });
});

describe('a file of the wrong kind is named, with what the command needs (file and line)', () => {
  let dir: string;
  let home: string;
  let S: string;
  let L: string;
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'stepwise-kind-'));
    home = join(dir, 'home');
    S = join(dir, 'S.jsonl');
    L = join(dir, 'L.jsonl');
    const s = await startCli(
      ['sample', '--dataset', 'sim', '--limit', '3', '--policy', 'sim', '--n', '2', '--out', S],
      home,
    ).done;
    expect(s.code, s.stderr).toBe(0);
    const l = await startCli(
      ['label', '--input', S, '--dataset', 'sim', '--policy', 'sim', '--rollouts', '2', '--out', L],
      home,
    ).done;
    expect(l.code, l.stderr).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const sample = '`stepwise sample` output';
  const label = '`stepwise label` output';
  const cases: Array<{ name: string; args: () => string[]; says: () => string }> = [
    {
      name: 'export --task judge-rl given sample output',
      args: () => [
        'export',
        '--input',
        S,
        '--task',
        'judge-rl',
        '--format',
        'trl',
        '--out',
        join(dir, 'x.jsonl'),
      ],
      says: () => `${S}, line 1: this is ${sample}; export --task judge-rl needs ${label}`,
    },
    {
      name: 'export --task refine-global given label output',
      args: () => [
        'export',
        '--input',
        L,
        '--task',
        'refine-global',
        '--format',
        'trl',
        '--out',
        join(dir, 'x.jsonl'),
      ],
      says: () => `${L}, line 1: this is ${label}; export --task refine-global needs ${sample}`,
    },
    {
      name: 'eval chunks given sample output',
      args: () => ['eval', 'chunks', '--input', S, '--judge', 'sim:generative', '--signal', 'abs-q'],
      says: () => `${S}, line 1: this is ${sample}; eval chunks needs ${label}`,
    },
    {
      name: 'select given label output',
      args: () => ['select', '--input', L, '--judge', 'sim:generative', '--out', join(dir, 'x.jsonl')],
      says: () => `${L}, line 1: this is ${label}; select needs ${sample}`,
    },
    {
      name: 'label given label output',
      args: () => [
        'label',
        '--input',
        L,
        '--policy',
        'sim',
        '--rollouts',
        '2',
        '--out',
        join(dir, 'x.jsonl'),
      ],
      says: () => `${L}, line 1: this is ${label}; label needs ${sample} or solution rows`,
    },
    {
      name: 'segment --segmentation llm given sample output',
      args: () => [
        'segment',
        '--segmentation',
        'llm',
        '--model',
        'sim',
        '--input',
        S,
        '--out',
        join(dir, 'x.jsonl'),
      ],
      says: () => `${S}, line 1: this is ${sample}; segment --segmentation llm needs solution texts`,
    },
    {
      name: 'merge of sample and label output',
      args: () => ['merge', S, L, '--out', join(dir, 'x.jsonl')],
      says: () => `${L}, line 1: this is ${label}; merging ${S} (${sample}) needs files of that kind`,
    },
    {
      name: 'sample --dataset jsonl given sample output',
      args: () => [
        'sample',
        '--dataset',
        'jsonl',
        '--path',
        S,
        '--policy',
        'sim',
        '--n',
        '1',
        '--out',
        join(dir, 'x.jsonl'),
      ],
      says: () => `line 1, field "answer": this is ${sample}; --dataset jsonl needs problem rows`,
    },
    {
      name: 'eval processbench --predictions given label output',
      args: () => ['eval', 'processbench', '--predictions', L, '--path', sharedData('processbench')],
      says: () =>
        `${L}, line 1: this is ${label}; eval processbench --predictions needs ProcessBench predictions`,
    },
    {
      name: 'verify --cases given sample output',
      args: () => ['verify', '--cases', S],
      says: () => `${S}, line 1: this is ${sample}; verify --cases needs a \`verify --cases\` file`,
    },
  ];

  it.each(cases)('$name: exit 2 naming the file kind', async ({ args, says }) => {
    const run = await startCli(args(), home).done;
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(says());
    expect(run.stderr).not.toMatch(/Invalid input|expected string/);
  });
});
