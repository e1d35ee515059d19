import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { startFlakyServer } from '../support/flaky-server.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

function rows(
  file: string,
): Array<{ id: string; samples: unknown[]; job: { hash: string; settings: Record<string, unknown> } }> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

describe('reruns never mix settings; the cache answers only for the endpoint that produced it', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-rerun-');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('acceptance 1: sample --n 2 then --n 4 exits 2 naming n; with --fresh it gives 4 samples per problem', async () => {
    const home = join(dir, 'home1');
    const out = join(dir, 'S.jsonl');
    const args = (n: number, extra: string[] = []) => [
      'sample',
      '--dataset',
      'sim',
      '--limit',
      '5',
      '--policy',
      'sim',
      '--n',
      String(n),
      '--out',
      out,
      '--json',
      ...extra,
    ];
    const first = await startCli(args(2), home).done;
    expect(first.stderr).not.toMatch(/stepwise:/);
    expect(first.stderr).toMatch(/^sample: 5 problems × 2 samples/m);
    expect(first.code).toBe(0);
    const made = rows(out);
    expect(made).toHaveLength(5);
    for (const r of made) {
      expect(r.samples).toHaveLength(2);
      expect(r.job.settings.n).toBe(2);
      expect(r.job.hash).toBe(JSON.parse(first.stdout).settingsHash);
    }
    const before = readFileSync(out, 'utf8');

    const second = await startCli(args(4), home).done;
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/--n 2 in the file, 4 now/);
    expect(second.stderr).toMatch(/--fresh/);
    expect(readFileSync(out, 'utf8')).toBe(before);

    const fresh = await startCli(args(4, ['--fresh']), home).done;
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.stdout).samplesPerProblem).toBe(4);
    const redone = rows(out);
    expect(redone).toHaveLength(5);
    for (const r of redone) expect(r.samples).toHaveLength(4);

    // The run records carry the settings too.
    const runs = await startCli(['runs', '--json'], home).done;
    expect(runs.stdout).toContain(JSON.parse(fresh.stdout).settingsHash);
  });

  it('acceptance 2: the same sample command against an endpoint where nothing listens exits non-zero', async () => {
    const gsm8k = sharedData('gsm8k/test.jsonl');
    const server = await startFlakyServer({ seed: 1, rate500: 0, rate429: 0, dropRate: 0, delayRate: 0 });
    const home = join(dir, 'home2');
    // A port that was just free: nothing listens there.
    const dead = await startFlakyServer({ seed: 1 });
    const deadUrl = dead.url;
    await dead.close();
    const args = (url: string, out: string) => [
      'sample',
      '--dataset',
      'gsm8k',
      '--path',
      gsm8k,
      '--limit',
      '3',
      '--policy',
      'openai:m',
      '--base-url',
      url,
      '--n',
      '2',
      '--max-retries',
      '0',
      '--out',
      out,
      '--json',
    ];
    try {
      const a = await startCli(args(server.url, join(dir, 'A.jsonl')), home).done;
      expect(a.code).toBe(0);
      expect(JSON.parse(a.stdout).cache).toEqual({ hits: 0, misses: 6, calls: 3, cachedCalls: 0 });
      // Same endpoint, another output: all from the cache, and the report says so.
      const again = await startCli(args(server.url, join(dir, 'A2.jsonl')), home).done;
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout).cache).toEqual({ hits: 6, misses: 0, calls: 3, cachedCalls: 3 });

      const b = await startCli(args(deadUrl, join(dir, 'B.jsonl')), home).done;
      expect(b.code).not.toBe(0);
      expect(b.code).not.toBeNull();
    } finally {
      await server.close();
    }
  });
});
