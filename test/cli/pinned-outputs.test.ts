import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * Outputs pinned byte for byte on the simulated world, taken before the CLI was reshaped
 * (settings schemas, one job harness, option groups: issue 29). Reshaping must not change a byte
 * of a row nor the settings hash recorded with it, so a file made before resumes after.
 *
 * When a change of a row format is meant (a new field, a new digest), rerun this file, check the
 * difference is exactly the one meant, and update the digest here in the same commit, saying why.
 *
 * Issue 27: every row of sample, label and search records `madeFrom` (resume by content); with that
 * field removed the files are byte for byte the earlier pins (39586b61…, b728b513…, f1f7d8cd…,
 * 35812064…) and the settings hashes are unchanged. J.parquet's rows gained
 * `extra_info.simulated: true` (labels from the simulated world), nothing else.
 */
const PINNED: Record<
  string,
  {
    args: string[];
    sha256: string;
    settingsHash: string;
    /** SHA-256 of the `--json` summary on stdout, the temp folder written as `DIR`. */
    summary?: string;
  }
> = {
  'S.jsonl': {
    args: ['sample', '--dataset', 'sim', '--limit', '4', '--policy', 'sim', '--n', '2'],
    sha256: '3a47e71202386837b94cf38209caf3768720af0824992a6aae8714135c191494',
    settingsHash: 'e7e590b1e81276ef',
  },
  'L.jsonl': {
    args: ['label', '--input', 'S.jsonl', '--dataset', 'sim', '--policy', 'sim', '--rollouts', '2'],
    sha256: '5f615725b4e94500077ed5eea6bcbf27f22577658f8a17b5844f1b51c87040a0',
    settingsHash: '32e12af6d0cbd013',
  },
  'R.jsonl': {
    args: [
      'search',
      '--dataset',
      'sim',
      '--limit',
      '3',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'chunk-reset',
    ],
    sha256: '8b6b8f1dd76cf309f6e9bf87a223dbc822b0fcfd726a0e68d7afb0721fe0adb2',
    settingsHash: 'c1791a7e265fae40',
  },
  'B.jsonl': {
    args: [
      'search',
      '--dataset',
      'sim',
      '--limit',
      '3',
      '--policy',
      'sim',
      '--judge',
      'sim:generative',
      '--strategy',
      'beam',
    ],
    sha256: '613617f8fe7ed295773f50823fa124199f35a600218f3b95e7ac2736935acd72',
    settingsHash: '0c0f70b1e129aa71',
  },
  'J.parquet': {
    args: [
      'export',
      '--input',
      'L.jsonl',
      '--task',
      'judge-rl',
      '--format',
      'verl',
      '--signal',
      'rel-effective',
    ],
    sha256: '9c6c0bf6f8150d038bfd65142353a0b39f260c5cba19fce634fe63654d339038',
    settingsHash: '',
  },
  'P.jsonl': {
    args: ['export', '--input', 'L.jsonl', '--task', 'prm', '--format', 'trl', '--signal', 'abs-q'],
    sha256: '9c67423659575bec7b67ce0e447bec7c128d489617ed1ec04d51c09598129fd0',
    settingsHash: '',
  },
  // Pinned before export became task exporters × format row-mappers with a settings schema
  // (issue 29 item 5): every flag that changes a row, through the CLI, with its --json summary.
  'K.jsonl': {
    args: [
      'label',
      '--input',
      'S.jsonl',
      '--dataset',
      'sim',
      '--policy',
      'sim',
      '--rollouts',
      '2',
      '--signals',
      'sorm,abs-q',
      '--keep-rollouts',
    ],
    sha256: '02a95b52fa89c7e954089765a56a87c99c754aedf2c07e096454931b8d1ba8a5',
    settingsHash: 'b2d0575876120c20',
  },
  'JO.jsonl': {
    args: [
      'export',
      '--input',
      'L.jsonl',
      '--task',
      'judge-rl',
      '--format',
      'openrlhf',
      '--no-balance',
      '--prompt-key',
      'q',
      '--label-key',
      'y',
      '--max-prompt-tokens',
      '300',
      '--json',
    ],
    sha256: '5a6b3a7fe69f2447f39a0b2e158368ae66dacdb108ef4e7d06a1f3db55a59762',
    settingsHash: '',
    summary: '5f1cb57d195528afeaaff6251bb48fe03643a8e9afc3c20c0d006a61360733c0',
  },
  'JV.parquet': {
    args: [
      'export',
      '--input',
      'L.jsonl',
      '--task',
      'judge-rl',
      '--seed',
      '5',
      '--data-source',
      'mine',
      '--split',
      'test',
      '--json',
    ],
    sha256: '4940e9a08419a1f0b42c36bfb688460921284c1ab72c7cb5993cc5dab2d99507',
    settingsHash: '',
    summary: '01a26c689e7edbaef079d18a8a83d4231015ac3446bd4c5231b76bf468811f76',
  },
  'SM.jsonl': {
    args: [
      'export',
      '--input',
      'L.jsonl',
      '--task',
      'sorm',
      '--format',
      'mathshepherd',
      '--seed',
      '2',
      '--json',
    ],
    sha256: 'efa5c9234ba070779112810f7a1a0ae9821ce8a720da115080c60c3510f9bde8',
    settingsHash: '',
    summary: 'df788e5d55cd876fa18a79ae859ff9aef5781eacdd9f13a0159d165069802b81',
  },
  'PO.jsonl': {
    args: ['export', '--input', 'L.jsonl', '--task', 'prm', '--format', 'openrlhf', '--signal', 'rel-ratio'],
    sha256: '9921e2dbfd8c2bcd9def5b0b9295344532eea4cea7086a3f6a5bd4cd432c1ec2',
    settingsHash: '',
  },
  'G.jsonl': {
    args: [
      'export',
      '--input',
      'S.jsonl',
      '--task',
      'refine-global',
      '--format',
      'trl',
      '--seed',
      '4',
      '--json',
    ],
    sha256: '457b2dd8079b242b05a883114499f80eb0729518f3df46d39c8981f47e6d552f',
    settingsHash: '',
    summary: 'f0781e497e2f1d8407faef111dc0e3ed813c4822406c5df8929eb6da05d362ae',
  },
  'LK.jsonl': {
    args: [
      'export',
      '--input',
      'K.jsonl',
      '--task',
      'refine-local',
      '--format',
      'openrlhf',
      '--chat-template',
      sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'),
      '--json',
    ],
    sha256: '77adafb752334d269097c77b0f1c649124689839527825f241f95ff4fa189589',
    settingsHash: '',
    summary: 'ee40fc59cd8e528453e090ad8a87e59cd57b2e3b6152aa169ac376bab74d6647',
  },
  'LP.jsonl': {
    args: [
      'export',
      '--input',
      'L.jsonl',
      '--task',
      'refine-local',
      '--format',
      'trl',
      '--policy',
      'sim',
      '--attempts',
      '4',
      '--max-tokens',
      '512',
      '--chat-template',
      sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'),
      '--json',
    ],
    sha256: 'be2b33f281ccdae003b5c465d596da976c3cbb893b81ba7b030fcf8119cb99e4',
    settingsHash: '',
    summary: 'ca1c11e93cef9df57e411ed636ae0ecef3307ea24fa0204add3bdc9138bbce27',
  },
};

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('sample, label, search and export on the sim world: the same bytes as before the reshaping', () => {
  let dir: string;
  const ran: Record<string, { code: number | null; stdout: string; stderr: string }> = {};
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-pinned-');
    const home = join(dir, 'home');
    // In order: label reads the sample, export the labels.
    for (const [out, { args }] of Object.entries(PINNED)) {
      const withFiles = args.map((a) => (a.endsWith('.jsonl') ? join(dir, a) : a));
      const run = await startCli([...withFiles, '--out', join(dir, out)], home).done;
      ran[out] = run;
    }
  }, 120_000);

  for (const [out, pin] of Object.entries(PINNED)) {
    it(`${pin.args[0]} → ${out}`, () => {
      expect(ran[out]?.code, ran[out]?.stderr).toBe(0);
      const bytes = readFileSync(join(dir, out));
      expect(sha256(bytes)).toBe(pin.sha256);
      if (pin.summary) expect(sha256(ran[out]?.stdout.split(dir).join('DIR') ?? '')).toBe(pin.summary);
      // The settings hash every row records (export rows record none).
      if (pin.settingsHash) {
        const first = JSON.parse(bytes.toString('utf8').split('\n')[0] ?? '') as { job: { hash: string } };
        expect(first.job.hash).toBe(pin.settingsHash);
      }
    });
  }
});
