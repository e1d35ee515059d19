import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles, batchCustomId, loadBatchResults } from '../../src/models/batch.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { type SimServer, startSimServer } from '../../src/sim/server.js';
import { openStore } from '../../src/store/db.js';
import { VLLM_BATCH_INPUT_FIELDS, vllmBatchOutputLines } from '../models/vllm-batch-fixture.js';
import { replayBatch } from '../support/batch-replayer.js';
import { BIN, startCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 17, acceptance 3: `label … --policy openai:sim --base-url URL --batch-out REQ.jsonl`;
 * REQ.jsonl replayed against the sim server by an independent replayer (test/support/
 * replay-batch.mjs, no stepwise code) that writes the Batch API output file; then
 * `label … --base-url <a port where nothing listens> --batch-in RES.jsonl` exits 0 and its
 * first errors equal an online run's.
 */

let dir: string;
let server: SimServer;
let deadUrl: string;
let input: string;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing');
  dir = tempDir('stepwise-batch-');
  server = await startSimServer({ readers: PROMPT_READERS, port: 0 });
  deadUrl = `http://127.0.0.1:${await freePort()}/v1`;
  input = join(dir, 'in.jsonl');
  const r = await startCli(
    ['sim', 'dataset', '--processbench', '--count', '16', '--seed', '21', '--out', input],
    dir,
  ).done;
  if (r.code !== 0) throw new Error(r.stderr);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Labeled {
  id: string;
  firstError: Record<string, number>;
}
const read = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Labeled);

async function label(home: string, extra: string[]) {
  const args = ['label', '--input', input, '--policy', 'openai:sim', '--rollouts', '4', '--json', ...extra];
  return startCli(args, join(dir, home)).done;
}

describe('label --batch-out / --batch-in', () => {
  it('batch-out, an independent replay, batch-in at a dead port: exit 0, first errors equal an online run', async () => {
    const signals = ['--signals', 'abs-q,rel-ratio'];
    const online = await label('online', [
      ...signals,
      '--base-url',
      server.baseURL,
      '--out',
      join(dir, 'online.jsonl'),
    ]);
    expect(online.code).toBe(0);
    const req = join(dir, 'REQ.jsonl');
    const out = join(dir, 'O.jsonl');
    server.resetMetrics();
    const first = await label('batch', [
      ...signals,
      '--base-url',
      server.baseURL,
      '--batch-out',
      req,
      '--out',
      out,
    ]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/wrote \d+ requests for 16 unfinished solutions/);
    expect(first.stderr).toMatch(/--batch-in/);
    // Raw-form lines are /v1/completions, which vllm run-batch refuses (run_batch.py reads chat,
    // embeddings, score and rerank bodies): the hint must not send them there.
    expect(first.stderr).not.toMatch(/vllm run-batch -i/);
    expect(first.stderr).toMatch(/vllm run-batch does not .* --prompt-form chat/s);
    expect(server.metrics().requests).toBe(0); // nothing was sent online
    const lines = readFileSync(req, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.length).toBe(JSON.parse(first.stdout).batch.requests);
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual(VLLM_BATCH_INPUT_FIELDS);
      expect(l.method).toBe('POST');
      expect(l.url).toBe('/v1/completions');
      expect(l.custom_id).toBe(batchCustomId(l.url, l.body));
    }
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(lines.length);
    const res = join(dir, 'RES.jsonl');
    await replayBatch(server.url, req, res);
    const second = await label('batch', [...signals, '--base-url', deadUrl, '--batch-in', res, '--out', out]);
    expect(second.stderr).not.toMatch(/unexpected/);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).batch.answered).toBe(lines.length);
    const a = read(join(dir, 'online.jsonl'));
    const b = read(out);
    expect(b.map((r) => r.id)).toEqual(a.map((r) => r.id));
    expect(b.map((r) => r.firstError)).toEqual(a.map((r) => r.firstError));
  }, 300_000);

  it('binary search takes rounds, one batch file each, and ends equal to the online run', async () => {
    const common = ['--signals', 'abs-q', '--search', 'binary'];
    const online = await label('bin-online', [
      ...common,
      '--base-url',
      server.baseURL,
      '--out',
      join(dir, 'bin-online.jsonl'),
    ]);
    expect(online.code).toBe(0);
    const out = join(dir, 'bin.jsonl');
    let batchIn: string[] = [];
    let rounds = 0;
    for (;;) {
      rounds++;
      const req = join(dir, `bin-req.round${rounds}.jsonl`);
      const r = await label('bin-batch', [
        ...common,
        '--base-url',
        deadUrl,
        ...batchIn,
        '--batch-out',
        req,
        '--out',
        out,
      ]);
      expect(r.code).toBe(0);
      const written = JSON.parse(r.stdout).batch.requests as number;
      if (written === 0) break;
      expect(rounds).toBeLessThan(10);
      const res = join(dir, `bin-res.round${rounds}.jsonl`);
      await replayBatch(server.url, req, res);
      batchIn = ['--batch-in', res];
    }
    expect(rounds).toBeGreaterThan(2);
    expect(read(out).map((r) => r.firstError)).toEqual(
      read(join(dir, 'bin-online.jsonl')).map((r) => r.firstError),
    );
  }, 400_000);

  it('with --batch-in alone, requests it does not answer fail the run and say to write another round', async () => {
    const res = join(dir, 'empty.jsonl');
    writeFileSync(res, '');
    const r = await label('lonely', [
      '--signals',
      'abs-q',
      '--base-url',
      deadUrl,
      '--batch-in',
      res,
      '--out',
      join(dir, 'x.jsonl'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /16 solutions need \d+ requests that .*empty\.jsonl does not answer: rerun with --batch-out/,
    );
    const sim = await startCli(
      [
        'label',
        '--input',
        input,
        '--policy',
        'sim',
        '--batch-out',
        join(dir, 'r.jsonl'),
        '--out',
        join(dir, 'y.jsonl'),
      ],
      dir,
    ).done;
    expect(sim.code).toBe(2);
    expect(sim.stderr).toMatch(/use --policy openai:<model>/);
  }, 60_000);
});

describe('batch files', () => {
  it("reads vLLM's output lines: answers load, error lines stay pending and are named", () => {
    const db = openStore(':memory:');
    const body = { model: 'policy', messages: [{ role: 'user', content: '2+2?' }], n: 1 };
    const okId = batchCustomId('/v1/chat/completions', body);
    const res = join(dir, 'vllm-out.jsonl');
    writeFileSync(res, `${vllmBatchOutputLines(okId, 'sw-other').join('\n')}\n`);
    const loaded = loadBatchResults(db, res);
    expect(loaded).toMatchObject({ loaded: 1, failed: 1 });
    expect(loaded.firstError).toMatch(/sw-other: .*Supported endpoints/);
    const req = join(dir, 'next.jsonl');
    const files = new BatchFiles(db, req);
    expect((files.exchange('/v1/chat/completions', body) as { choices: unknown[] }).choices).toHaveLength(1);
    const other = { ...body, n: 2 };
    expect(() => files.exchange('/v1/chat/completions', other)).toThrow(/waiting for its batch result/);
    expect(() => files.exchange('/v1/chat/completions', other)).toThrow(/waiting/);
    files.close();
    expect(readFileSync(req, 'utf8').trim().split('\n')).toHaveLength(1); // each custom_id once
    writeFileSync(res, '{"custom_id": 3}\n');
    expect(() => loadBatchResults(db, res)).toThrow(
      /vllm-out\.jsonl, line 1, field "custom_id": missing custom_id/,
    );
  });
});
