import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { runSampleJobSummary } from '../../src/sample/sample.js';
import { type SimServer, startSimServer } from '../../src/sim/server.js';
import { fakePolicy, fakeProblem } from '../search/fakes.js';
import { replayBatch } from '../support/batch-replayer.js';
import { BIN, startCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { liveHeapBytes } from '../support/heap.js';

/**
 * Issue 17 for `sample`: records stream (never held), `--shard K/N` parts merge into the
 * unsharded file, and `--batch-out` / `--batch-in` take the job through one batch round.
 */

let dir: string;
let server: SimServer;
let deadUrl: string;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing');
  dir = mkdtempSync(join(tmpdir(), 'stepwise-sample-scale-'));
  server = await startSimServer({ readers: PROMPT_READERS, port: 0 });
  deadUrl = `http://127.0.0.1:${await freePort()}/v1`;
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const text = (f: string) => readFileSync(f, 'utf8');
const rows = (f: string) =>
  text(f)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; samples: Array<{ text: string; correct: boolean }> });

async function cli(args: string[], home = 'home') {
  return startCli(args, join(dir, home)).done;
}

describe('sample at scale', () => {
  it('does not hold the records: live heap grows by far less than the output', async () => {
    const problems = Array.from({ length: 30 }, (_, i) => fakeProblem(`big${i}`, 4));
    const { policy } = fakePolicy({ stepError: 0, step: (i) => `step ${i + 1} ok ${'x'.repeat(60_000)}` });
    const out = join(dir, 'big.jsonl');
    const before = liveHeapBytes();
    const summary = await runSampleJobSummary({ problems, policy, n: 2, out });
    const grown = liveHeapBytes() - before;
    expect(summary.problems).toBe(30);
    expect(statSync(out).size).toBeGreaterThan(12e6);
    expect(grown).toBeLessThan(statSync(out).size / 5);
  }, 120_000);

  it('three shards merged equal one unsharded run, line for line', async () => {
    const common = [
      'sample',
      '--dataset',
      'sim',
      '--count',
      '30',
      '--policy',
      'sim',
      '--n',
      '2',
      '--seed',
      '3',
      '--json',
    ];
    const full = await cli([...common, '--out', join(dir, 'full.jsonl')]);
    expect(full.code, full.stderr).toBe(0);
    const parts: string[] = [];
    for (let k = 1; k <= 3; k++) {
      const part = join(dir, `part${k}.jsonl`);
      const r = await cli([...common, '--shard', `${k}/3`, '--out', part]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).shard).toBe(`${k}/3`);
      expect(rows(part).length).toBeGreaterThan(2);
      expect(rows(part).length).toBeLessThan(25);
      parts.push(part);
    }
    const ids = join(dir, 'ids.jsonl');
    writeFileSync(
      ids,
      rows(join(dir, 'full.jsonl'))
        .map((r) => `${JSON.stringify({ id: r.id })}\n`)
        .join(''),
    );
    const merged = join(dir, 'merged.jsonl');
    const m = await cli(['merge', ...parts, '--input', ids, '--out', merged, '--json']);
    expect(JSON.parse(m.stdout)).toMatchObject({ records: 30, duplicates: 0, missing: 0 });
    expect(text(merged)).toBe(text(join(dir, 'full.jsonl')));
  }, 300_000);

  it('--batch-out, an independent replay, --batch-in at a dead port: exit 0, the samples of an online run', async () => {
    const common = [
      'sample',
      '--dataset',
      'sim',
      '--count',
      '12',
      '--policy',
      'openai:sim',
      '--n',
      '3',
      '--seed',
      '5',
      '--json',
    ];
    const online = await cli(
      [...common, '--base-url', server.baseURL, '--out', join(dir, 'online.jsonl')],
      'online',
    );
    expect(online.code, online.stderr).toBe(0);
    server.resetMetrics();
    const req = join(dir, 'REQ.jsonl');
    const out = join(dir, 'O.jsonl');
    const first = await cli(
      [...common, '--base-url', server.baseURL, '--batch-out', req, '--out', out],
      'batch',
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/wrote 12 requests for 12 unfinished problems/);
    expect(server.metrics().requests).toBe(0);
    const lines = text(req)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(12);
    expect(lines.every((l) => l.method === 'POST' && l.body.n === 3)).toBe(true);
    const res = join(dir, 'RES.jsonl');
    await replayBatch(server.url, req, res);
    const second = await cli([...common, '--base-url', deadUrl, '--batch-in', res, '--out', out], 'batch');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).batch.answered).toBe(12);
    const strip = (f: string) =>
      rows(f).map((r) => ({ id: r.id, samples: r.samples.map((s) => [s.text, s.correct]) }));
    expect(strip(out)).toEqual(strip(join(dir, 'online.jsonl')));
    // --batch-in alone with requests it does not answer: exit 1, saying to write another round.
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const lonely = await cli(
      [...common, '--base-url', deadUrl, '--batch-in', empty, '--out', join(dir, 'x.jsonl')],
      'lonely',
    );
    expect(lonely.code).toBe(1);
    expect(lonely.stderr).toMatch(/12 problems need 12 requests .* rerun with --batch-out/);
  }, 300_000);
});
