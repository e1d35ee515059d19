import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { type SimServeCli, startSimServeCli } from '../support/sim-serve.js';
import { tempDir } from '../support/temp.js';

/**
 * Issue 27, item 6: `select` with a judge reached by a neutral name (`generative:openai:anything`)
 * against `stepwise sim serve` marked only 14 of 20 lines simulated: the judge is known to be
 * simulated only once the server's first marked reply is back, and lines finished before that
 * carried no flag. Every line of the finished output says so now, whenever it was detected.
 */

let dir: string;
let sim: SimServeCli;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
  dir = tempDir('stepwise-select-sim-');
  sim = await startSimServeCli(join(dir, 'sim-home'));
}, 60_000);
afterAll(async () => {
  await sim?.stop();
});

describe('select marks every line simulated once the world is known to be', () => {
  it('20 problems, judge named neutrally, sim server: 20 of 20 lines say simulated', async () => {
    const home = join(dir, 'home');
    const samples = join(dir, 'samples.jsonl');
    const s = await startCli(
      ['sample', '--dataset', 'sim', '--count', '20', '--policy', 'sim', '--n', '3', '--out', samples],
      home,
    ).done;
    expect(s.code, s.stderr).toBe(0);
    // Samples that do not say where they came from: only the judge's replies can tell.
    const plain = readFileSync(samples, 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        const { simulated: _s, ...row } = JSON.parse(l) as Record<string, unknown>;
        return JSON.stringify(row);
      });
    writeFileSync(samples, `${plain.join('\n')}\n`);
    const out = join(dir, 'picks.jsonl');
    const r = await startCli(
      [
        'select',
        '--input',
        samples,
        '--dataset',
        'sim',
        '--count',
        '20',
        '--judge',
        'generative:openai:anything',
        '--base-url',
        sim.baseURL,
        '--concurrency',
        '8',
        '--out',
        out,
        '--json',
      ],
      home,
    ).done;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ simulated: true, problems: 20 });
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { simulated?: boolean });
    expect(rows).toHaveLength(20);
    expect(rows.filter((row) => row.simulated === true)).toHaveLength(20);
  }, 180_000);
});
