import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunSettings } from '../../src/cli/config-file.js';
import type { JobSettings } from '../../src/jobs/settings.js';
import { readLabelInput } from '../../src/label/input.js';
import { runLabelJob } from '../../src/label/job.js';
import { createPolicy } from '../../src/models/policy.js';
import { boxedChecker, createFakePolicyModel } from '../label/fake-model.js';
import { startTaggingServer } from '../segment/tagging-server.js';
import { BIN, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/** `--config run.json` replays the settings a run recorded (src/cli/config-file.ts). */

function jobsOf(file: string): JobSettings[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { job: JobSettings }).job);
}

/** A run record of another command (label), as `stepwise runs --json` prints it. */
const LABEL_RUN = {
  id: '20261201000000-0000abcd',
  command: 'label',
  config: { job: { command: 'label', hash: '0000000000000000', settings: { seed: 0 } } },
};

let dir: string;
let home: string;
let samples: string;
const cli = (args: string[]) => startCli(args, home).done;
const write = (name: string, value: unknown): string => {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};
/** The last run of `command` as `stepwise runs --json` prints it: one run.json. */
async function lastRun(command: string): Promise<string> {
  const r = await cli(['runs', '--json', '--command', command, '--limit', '1']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-config-replay-');
  home = join(dir, 'home');
  samples = join(dir, 'samples.jsonl');
  const r = await cli([
    'sample',
    '--dataset',
    'sim',
    '--limit',
    '4',
    '--policy',
    'sim',
    '--n',
    '1',
    '--out',
    samples,
  ]);
  expect(r.code, r.stderr).toBe(0);
});

// Settings given by flag, none of them at its default.
const LABEL_FLAGS = [
  '--signals',
  'abs-q,ms-hard',
  '--rollouts',
  '4',
  '--early-stop',
  '2',
  '--seed',
  '3',
  '--temperature',
  '0.7',
  '--gamma',
  '0.5',
  '--max-tokens',
  '900',
];

describe('label --config run.json', () => {
  let first: { settingsHash: string; solutions: number };
  let out: string;
  let run: string;
  beforeAll(async () => {
    out = join(dir, 'labels.jsonl');
    const r = await cli([
      'label',
      '--input',
      samples,
      '--dataset',
      'sim',
      '--policy',
      'sim',
      ...LABEL_FLAGS,
      '--out',
      out,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    first = JSON.parse(r.stdout);
    run = await lastRun('label');
  });

  it('the run record holds the resolved config and the settings every row records', () => {
    const record = JSON.parse(run) as {
      command: string;
      config: Record<string, unknown> & { job: JobSettings };
    };
    expect(record.command).toBe('label');
    const [job] = jobsOf(out);
    expect(record.config.job).toEqual(job);
    expect(job.hash).toBe(first.settingsHash);
    // The whole resolved config, the fields that do not change a row included.
    expect(record.config).toMatchObject({
      rollouts: 4,
      earlyStop: 2,
      seed: 3,
      concurrency: 8,
      cache: 'full',
    });
    expect(job.settings).not.toHaveProperty('concurrency');
  });

  it('the library, given the same config, records the same settings as the CLI', async () => {
    const input = write('lib-input.jsonl', { id: 'x', problem: 'Q', answer: '42', steps: ['a', 'b'] });
    const summary = await runLabelJob({
      solutions: readLabelInput(input),
      policy: createPolicy(createFakePolicyModel(() => 1)),
      checker: boxedChecker,
      out: join(dir, 'lib.jsonl'),
      config: {
        signals: ['abs-q', 'ms-hard'],
        rollouts: 4,
        earlyStop: 2,
        seed: 3,
        temperature: 0.7,
        gamma: 0.5,
        maxTokens: 900,
      },
      record: { dataset: 'sim', simSeed: 0, policy: 'sim' },
    });
    const [cliJob] = jobsOf(out);
    expect(summary.settings).toEqual(cliJob);
    expect(jobsOf(join(dir, 'lib.jsonl'))[0]).toEqual(cliJob);
  });

  it('a rerun with --config and no setting flags has the same settings and does no new work', async () => {
    const file = write('run.json', run);
    const before = readFileSync(out, 'utf8');
    const r = await cli(['label', '--input', samples, '--config', file, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const again = JSON.parse(r.stdout);
    expect(again.settingsHash).toBe(first.settingsHash);
    expect(again.resumed).toBe(first.solutions);
    expect(again.spent.policy.calls).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(before);
    // An output row carries the same record: it replays too.
    const row = write('row.json', readFileSync(out, 'utf8').split('\n')[0]);
    const fromRow = await cli([
      'label',
      '--input',
      samples,
      '--config',
      row,
      '--out',
      join(dir, 'row-out.jsonl'),
      '--json',
    ]);
    expect(fromRow.code, fromRow.stderr).toBe(0);
    expect(JSON.parse(fromRow.stdout).settingsHash).toBe(first.settingsHash);
  });

  it('a flag given on the command line overrides the file', async () => {
    const file = write('run.json', run);
    // On the same output: refused as other settings, naming the flag — the override took effect.
    const same = await cli(['label', '--input', samples, '--config', file, '--seed', '4', '--out', out]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--seed 3 in the file, 4 now/);
    const other = join(dir, 'seed4.jsonl');
    const r = await cli([
      'label',
      '--input',
      samples,
      '--config',
      file,
      '--seed',
      '4',
      '--out',
      other,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const [job] = jobsOf(other);
    const [recorded] = jobsOf(out);
    expect(job.settings).toEqual({ ...recorded.settings, seed: 4 });
    // A bare settings object: only what it names is set.
    const bare = write('bare.json', { seed: 3, rollouts: 2, signals: ['sorm'] });
    const b = await cli([
      'label',
      '--input',
      samples,
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--config',
      bare,
      '--out',
      join(dir, 'bare.jsonl'),
    ]);
    expect(b.code, b.stderr).toBe(0);
    expect(jobsOf(join(dir, 'bare.jsonl'))[0].settings).toMatchObject({
      seed: 3,
      rollouts: 2,
      signals: ['sorm'],
    });
  });

  it('refuses, with exit 2 and the file and field named: another command, unknown or invalid fields, a file that is no run', async () => {
    const sampleRun = write('sample-run.json', await lastRun('sample'));
    const cases: Array<[string, RegExp]> = [
      [sampleRun, /sample-run\.json records a run of `stepwise sample`, not `stepwise label`/],
      [
        write('unknown.json', { rolouts: 4 }),
        /unknown\.json: field "rolouts" is not a setting of `stepwise label`/,
      ],
      [
        write('invalid.json', { rollouts: 0 }),
        /invalid\.json: field "rollouts": --rollouts must be a positive integer \(got "0"\)/,
      ],
      [
        write('badtype.json', { keepRollouts: 'yes' }),
        /badtype\.json: field "keepRollouts" must be true or false/,
      ],
      [write('badchoice.json', { search: 'ternary' }), /badchoice\.json: field "search": .*ternary/],
      [write('notjson.json', '{"rollouts": '), /notjson\.json: not valid JSON/],
      [write('lines.json', `${run}\n${run}\n`), /lines\.json: 2 lines, not one JSON value/],
      [write('norecord.json', { id: 'r1', command: 'label', config: {} }), /run r1 .* recorded no settings/],
      [
        write('digest.json', { chatTemplate: 'tpl.json@sha256:abc' }),
        /digest\.json: field "chatTemplate" records a file.s digest or contents .*--chat-template FILE/,
      ],
      [join(dir, 'missing.json'), /missing\.json: cannot read it/],
      [write('empty.json', ''), /empty\.json: empty/],
    ];
    for (const [file, message] of cases) {
      const r = await cli([
        'label',
        '--input',
        samples,
        '--dataset',
        'sim',
        '--policy',
        'sim',
        '--config',
        file,
        '--out',
        join(dir, 'refused.jsonl'),
      ]);
      expect(r.code, `${file}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(join(dir, 'refused.jsonl'))).toBe(false);
    // Without --policy, from neither the flags nor the file: the required option is still required.
    const r = await cli([
      'label',
      '--input',
      samples,
      '--config',
      write('seed.json', { seed: 1 }),
      '--out',
      join(dir, 'x.jsonl'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/required option '--policy <spec>' not specified/);
  });
});

describe('search --config run.json', () => {
  it('replays the recorded search (renamed flags included) and resumes it; an explicit flag overrides', async () => {
    const out = join(dir, 'search.jsonl');
    const args = ['--limit', '2', '--out', out, '--json'];
    const r = await cli([
      'search',
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'greedy-prm',
      '--children',
      '2',
      '--prompt-form',
      'chat',
      '--no-trace',
      ...args,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const first = JSON.parse(r.stdout);
    const file = write('search-run.json', await lastRun('search'));
    const before = readFileSync(out, 'utf8');
    const [job] = jobsOf(out);
    expect(job.settings).toMatchObject({ childrenPerNode: 2, form: 'chat', trace: false });
    const again = await cli(['search', '--config', file, ...args]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).settingsHash).toBe(first.settingsHash);
    expect(JSON.parse(again.stdout).resumed).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe(before);
    const override = await cli(['search', '--config', file, '--children', '3', ...args]);
    expect(override.code).toBe(2);
    expect(override.stderr).toMatch(/2 in the file, 3 now/);
    const labelRun = write('label-run.json', LABEL_RUN);
    const wrong = await cli(['search', '--config', labelRun, ...args]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/records a run of `stepwise label`, not `stepwise search`/);
  });
});

describe('every job that records settings replays its own record', () => {
  /** The settings hash of the last run of `command`. */
  const lastHash = async (command: string): Promise<string> =>
    (JSON.parse(await lastRun(command)) as { config: { job: JobSettings } }).config.job.hash;

  // [command, the first run's flags (settings and the rest), the rest again (not settings)]
  const jobs: Array<[string, string[], string[]]> = [
    [
      'sample',
      [
        '--dataset',
        'sim',
        '--policy',
        'sim',
        '--n',
        '2',
        '--segmentation',
        'steps',
        '--prompt-form',
        'chat',
        '--seed',
        '5',
      ],
      ['--limit', '2'],
    ],
    ['select', ['--judge', 'sim:generative', '--seed', '2'], ['--input', '<samples>', '--dataset', 'sim']],
    [
      'bench search',
      [
        '--dataset',
        'sim',
        '--policy',
        'sim',
        '--judge',
        'sim:generative',
        '--strategies',
        'sample',
        'best-of-n:1,2',
        '--seed',
        '3',
      ],
      ['--limit', '2'],
    ],
    [
      'eval processbench',
      [
        '--judge',
        'sim:generative',
        '--path',
        sharedData('processbench/gsm8k.json'),
        '--judge-votes',
        '2',
        '--seed',
        '4',
      ],
      ['--limit', '3', '--sim-guess'],
    ],
    [
      'label-code',
      [
        '--dataset',
        'mbpp',
        '--path',
        sharedData('mbpp/mbpp.jsonl'),
        '--seed',
        '2',
        '--mutants-per-problem',
        '2',
      ],
      ['--limit', '1'],
    ],
  ];
  it.each(jobs)('%s', async (command, settings, rest) => {
    const other = rest.map((a) => (a === '<samples>' ? samples : a));
    const ext = command.includes(' ') ? 'json' : 'jsonl';
    const a = await cli([
      ...command.split(' '),
      ...settings,
      ...other,
      '--out',
      join(dir, `a-${command}.${ext}`),
    ]);
    expect(a.code, a.stderr).toBe(0);
    const hash = await lastHash(command);
    const file = write(`${command}-run.json`, await lastRun(command));
    const b = await cli([
      ...command.split(' '),
      '--config',
      file,
      ...other,
      '--out',
      join(dir, `b-${command}.${ext}`),
    ]);
    expect(b.code, b.stderr).toBe(0);
    expect(await lastHash(command)).toBe(hash);
    const wrong = await cli([
      ...command.split(' '),
      '--config',
      write('label-run.json', LABEL_RUN),
      ...other,
      '--out',
      join(dir, 'c.json'),
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(`records a run of \`stepwise label\`, not \`stepwise ${command}\``);
  });

  it('segment --segmentation llm: an output row replays its settings', async () => {
    const input = write(
      'seg-in.jsonl',
      [
        { id: 'a', text: 'One plus one is two. So the answer is 2.' },
        { id: 'b', text: 'Two times three is six. The answer is 6.' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const server = await startTaggingServer();
    try {
      const common = ['segment', '--base-url', server.url, '--input', input];
      const a = await cli([
        ...common,
        '--segmentation',
        'llm',
        '--model',
        'openai:m',
        '--attempts',
        '2',
        '--seed',
        '7',
        '--out',
        join(dir, 'seg-a.jsonl'),
      ]);
      expect(a.code, a.stderr).toBe(0);
      const row = write('seg-row.json', readFileSync(join(dir, 'seg-a.jsonl'), 'utf8').split('\n')[0]);
      const b = await cli([...common, '--config', row, '--out', join(dir, 'seg-b.jsonl')]);
      expect(b.code, b.stderr).toBe(0);
      expect(jobsOf(join(dir, 'seg-b.jsonl'))).toEqual(jobsOf(join(dir, 'seg-a.jsonl')));
      expect(jobsOf(join(dir, 'seg-b.jsonl'))[0].settings).toMatchObject({
        attempts: 2,
        seed: 7,
        model: 'openai:m',
      });
    } finally {
      await server.close();
    }
  });
});

describe('readRunSettings: what run.json may be', () => {
  const job = { command: 'label', hash: 'h', settings: { seed: 1 } };
  it.each([
    ['a run record', { id: 'r', command: 'label', config: { input: 'x', job } }],
    ['a job record', job],
    ['an output row', { id: 'p#0', chunks: [], job }],
  ])('%s', (_, value) => {
    expect(readRunSettings(write('shape.json', value))).toEqual({ command: 'label', settings: { seed: 1 } });
  });
  it('a bare settings object names no command', () => {
    expect(readRunSettings(write('shape.json', { seed: 1 }))).toEqual({ settings: { seed: 1 } });
  });
  it('refuses a malformed job record and what is not an object', () => {
    expect(() => readRunSettings(write('shape.json', { job: { command: 'label' } }))).toThrow(
      /field "job" is not a job record/,
    );
    expect(() => readRunSettings(write('shape.json', [1]))).toThrow(/not a JSON object/);
  });
});
