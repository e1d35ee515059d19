import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runsOf, startCli } from '../support/cli.js';
import { type Loopback, listenOnLoopback } from '../support/loopback.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';
import { labelRows } from './export-fixtures.js';
import { writeJsonlFile } from './fixtures.js';

/**
 * Ctrl-C on `stepwise export` (now a job in the harness): the run is recorded as interrupted, and
 * the export leaves neither a half-written training set nor its temporary file. The export is
 * stopped while it waits on a policy server that never answers a completion, so the moment is
 * not a matter of timing.
 */
describe('export interrupted with Ctrl-C', () => {
  let dir: string;
  let server: Loopback;
  let url: string;
  const asked: string[] = [];
  const held: http.ServerResponse[] = [];
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    dir = tempDir('stepwise-export-int-');
    const policy = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
        return;
      }
      held.push(res); // never answered
    });
    server = await listenOnLoopback(policy);
    url = `${server.origin}/v1`;
  });
  // Closing drops the held requests' connections too; temp-cleanup removes the folder.
  afterAll(() => server.close());

  it('records the run as interrupted and leaves no output and no temporary file', async () => {
    const home = join(dir, 'home');
    // Labels without kept rollouts: every bad solution asks the policy for a continuation.
    const rows = labelRows(20).map((r) => ({
      ...(r as object),
      emptyPrefixRollouts: undefined,
      chunks: (r as { chunks: object[] }).chunks.map((c) => ({ ...c, rollouts: 4 })),
    }));
    const labels = writeJsonlFile(dir, 'labels.jsonl', rows);
    const out = join(dir, 'out', 'local.jsonl');
    const run = startCli(
      [
        'export',
        '--input',
        labels,
        '--task',
        'refine-local',
        '--format',
        'openrlhf',
        '--policy',
        'openai:m',
        '--base-url',
        url,
        '--chat-template',
        sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'),
        '--out',
        out,
      ],
      home,
    );
    const deadline = Date.now() + 90_000;
    const tmpOf = () =>
      existsSync(join(dir, 'out')) ? readdirSync(join(dir, 'out')).filter((f) => f.includes('.tmp-')) : [];
    while (Date.now() < deadline && !(held.length > 0 && tmpOf().length > 0))
      await new Promise((r) => setTimeout(r, 100));
    expect(held.length, `the export asked the policy (${asked.join(', ')})`).toBeGreaterThan(0);
    expect(tmpOf()).toHaveLength(1);

    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/run \S+ \(`stepwise export`\) recorded as interrupted/);
    expect(tmpOf()).toEqual([]);
    expect(existsSync(out)).toBe(false);

    const runs = await runsOf(home);
    expect(runs.find((r) => r.command === 'export')?.status).toBe('interrupted');
  }, 150_000);
});
