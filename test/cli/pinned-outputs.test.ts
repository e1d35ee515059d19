import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
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
const PINNED: Record<string, { args: string[]; sha256: string; settingsHash: string }> = {
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
};

describe('sample, label, search and export on the sim world: the same bytes as before the reshaping', () => {
  let dir: string;
  const ran: Record<string, { code: number | null; stderr: string }> = {};
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
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(pin.sha256);
      // The settings hash every row records (export rows record none).
      if (pin.settingsHash) {
        const first = JSON.parse(bytes.toString('utf8').split('\n')[0] ?? '') as { job: { hash: string } };
        expect(first.job.hash).toBe(pin.settingsHash);
      }
    });
  }
});
