import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverInfoFromModels } from '../../src/models/server-kind.js';
import { startCli } from '../support/cli.js';
import { type SimServeCli, startSimServeCli } from '../support/sim-serve.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 16, acceptance 4 (item 10): `sample` and `label` against `npx stepwise sim serve` with
 * `--policy openai:anything` write `"simulated": true` on every line — decided by what the server
 * is (it announces itself in /v1/models), not by the spec's spelling.
 */

const dir = tempDir('stepwise-sim-records-');
const home = join(dir, 'home');
let server: SimServeCli;
let baseURL = '';

beforeAll(async () => {
  server = await startSimServeCli(home);
  baseURL = server.baseURL;
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

describe('records from the sim server say simulated, whatever the spec says', () => {
  it('the sim server announces itself in /v1/models; a real-looking reply does not', async () => {
    const reply = await (await fetch(`${baseURL}/models`)).json();
    expect(serverInfoFromModels(reply).simulated).toBe(true);
    expect(serverInfoFromModels({ data: [{ id: 'm', owned_by: 'vllm' }] }).simulated).toBe(false);
  });

  it('acceptance 4: sample and label with --policy openai:anything write "simulated": true on every line', async () => {
    const samples = join(dir, 'S.jsonl');
    const s = await startCli(
      [
        'sample',
        '--dataset',
        'sim',
        '--limit',
        '3',
        '--policy',
        'openai:anything',
        '--base-url',
        baseURL,
        '--n',
        '2',
        '--no-cache',
        '--out',
        samples,
        '--json',
      ],
      home,
    ).done;
    expect(s.stderr).not.toMatch(/unexpected error/);
    expect(s.code).toBe(0);
    const sampled = lines(samples);
    expect(sampled).toHaveLength(3);
    for (const l of sampled) expect(l.simulated).toBe(true);
    expect(JSON.parse(s.stdout).simulated).toBe(true);

    const labels = join(dir, 'L.jsonl');
    const l = await startCli(
      [
        'label',
        '--input',
        samples,
        '--dataset',
        'sim',
        '--policy',
        'openai:anything',
        '--base-url',
        baseURL,
        '--rollouts',
        '2',
        '--signals',
        'abs-q',
        '--no-cache',
        '--out',
        labels,
        '--json',
      ],
      home,
    ).done;
    expect(l.stderr).not.toMatch(/unexpected error/);
    expect(l.code, l.stderr).toBe(0);
    const labeled = lines(labels);
    expect(labeled).toHaveLength(6);
    for (const r of labeled) expect(r.simulated).toBe(true);
    expect(JSON.parse(l.stdout).simulated).toBe(true);
    // The readable summaries name the world too.
    expect(s.stderr).toMatch(/^sample: .*\[SIMULATED world/m);
    expect(l.stderr).toMatch(/^label: .*\[SIMULATED world/m);
  });

  it('a judge reached as openai:anything is known as simulated by the replies the sim server marks, also from the cache', async () => {
    const simSamples = join(dir, 'S-sim.jsonl');
    const s = await startCli(
      ['sample', '--dataset', 'sim', '--limit', '6', '--policy', 'sim', '--n', '4', '--out', simSamples],
      home,
    ).done;
    expect(s.code, s.stderr).toBe(0);
    // Responses as if a real policy wrote them (no simulated mark), each problem with a correct
    // one, so every selection asks the judge: only the judge can make these rows simulated.
    const samples = join(dir, 'S-judge.jsonl');
    const unmarked = lines(simSamples)
      .filter((r) => r.samples.some((x: { correct: boolean }) => x.correct))
      .slice(0, 3)
      .map(({ simulated: _s, ...r }) => ({
        ...r,
        samples: r.samples.map(({ simulated: _x, ...x }: Record<string, unknown>) => x),
      }));
    expect(unmarked).toHaveLength(3);
    writeFileSync(samples, unmarked.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const judge = ['--judge', 'generative:openai:anything', '--base-url', baseURL];
    // Twice: the second run is served from the model-call cache and must still know.
    for (const out of ['Sel-1.jsonl', 'Sel-2.jsonl']) {
      const r = await startCli(
        [
          'select',
          '--input',
          samples,
          '--dataset',
          'sim',
          ...judge,
          '--quiet',
          '--json',
          '--out',
          join(dir, out),
        ],
        home,
      ).done;
      expect(r.code, r.stderr).toBe(0);
      const rows = lines(join(dir, out));
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row.simulated, out).toBe(true);
      expect(JSON.parse(r.stdout).simulated, out).toBe(true);
    }

    const labels = join(dir, 'L-judge.jsonl');
    const l = await startCli(
      [
        'label',
        '--input',
        samples,
        '--dataset',
        'sim',
        '--policy',
        'sim',
        '--rollouts',
        '2',
        '--signals',
        'abs-q',
        '--out',
        labels,
      ],
      home,
    ).done;
    expect(l.code, l.stderr).toBe(0);
    const report = join(dir, 'chunks.json');
    const e = await startCli(
      [
        'eval',
        'chunks',
        '--input',
        labels,
        '--signal',
        'abs-q',
        ...judge,
        '--quiet',
        '--json',
        '--out',
        report,
      ],
      home,
    ).done;
    expect(e.code, e.stderr).toBe(0);
    const written = JSON.parse(readFileSync(report, 'utf8'));
    expect(written.simulated).toBe(true);
    expect(written.notice).toMatch(/SIMULATED/);
  });
});
