import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, type CliRun, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 27, item 6: `--format verl --out x.jsonl` wrote Parquet into a `.jsonl` name, and verl
 * rows exported from simulated labels did not say simulated.
 */

let dir: string;
let labels: string;
const cli = (args: string[]): Promise<CliRun> => startCli(args, join(dir, 'home')).done;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-export-format-');
  const samples = join(dir, 'samples.jsonl');
  labels = join(dir, 'labels.jsonl');
  const sim = ['--dataset', 'sim', '--count', '4'];
  expect((await cli(['sample', ...sim, '--policy', 'sim', '--n', '2', '--out', samples])).code).toBe(0);
  const l = await cli([
    'label',
    '--input',
    samples,
    ...sim,
    '--policy',
    'sim',
    '--rollouts',
    '2',
    '--out',
    labels,
  ]);
  expect(l.code, l.stderr).toBe(0);
}, 120_000);

const exportArgs = (extra: string[]) => ['export', '--input', labels, '--task', 'judge-rl', ...extra];

describe('export: the format follows --out', () => {
  it('refuses a format that does not match the extension (exit 2), writing nothing', async () => {
    for (const [format, out] of [
      ['verl', 'x.jsonl'],
      ['trl', 'x.parquet'],
    ]) {
      const r = await cli(exportArgs(['--format', format, '--out', join(dir, out)]));
      expect(r.code, `${format} → ${out}`).toBe(2);
      expect(r.stderr).toMatch(
        format === 'verl' ? /writes Parquet.*not named \.parquet/ : /writes JSONL.*\.parquet/,
      );
      expect(existsSync(join(dir, out))).toBe(false);
    }
    // A JSONL name fits several formats: --format is needed.
    const ambiguous = await cli(exportArgs(['--out', join(dir, 'y.jsonl')]));
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/pass --format/);
  }, 60_000);

  it('.parquet without --format is verl; simulated labels put simulated in every row’s extra_info', async () => {
    const out = join(dir, 'judge.parquet');
    const r = await cli(exportArgs(['--out', out, '--json']));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ format: 'verl', simulated: true });
    const bytes = readFileSync(out);
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    const rows = (await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    })) as Array<{ extra_info: { simulated?: boolean } }>;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.extra_info.simulated === true)).toBe(true);
  }, 60_000);
});
