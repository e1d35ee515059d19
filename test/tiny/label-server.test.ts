import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { type LlamaServer, startLlamaServer } from '../support/llama-server.js';
import { tempDir } from '../support/temp.js';

/**
 * The StepWiser loop's first two commands on the tiny policy served by the real llama.cpp
 * server (issue 14, item 3): `stepwise sample` and `stepwise label` under `--segmentation tags`,
 * through `--policy openai:… --base-url`, in both prompt forms. Rollouts from a garbled prefix
 * (text the network never saw) are served too: they once failed the job with HTTP 500, when a
 * sampled byte-fallback token made the reply invalid UTF-8 (docs/tiny.md).
 */

const MODEL = new URL('../../models/tiny/policy.gguf', import.meta.url).pathname;
const QUESTIONS = [
  ['Start with 19. Multiply by 2, then subtract 3, then subtract 3. What is the final number?', '32'],
  ['Start with 11. Subtract 9, then add 9. What is the final number?', '11'],
  ['Start with 14. Add 9, then add 9, then subtract 4. What is the final number?', '28'],
  ['Start with 16. Multiply by 3, then subtract 9. What is the final number?', '39'],
];

let dir: string;
let server: LlamaServer;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: npm run build first');
  dir = tempDir('stepwise-tiny-label-');
  writeFileSync(
    join(dir, 'problems.jsonl'),
    QUESTIONS.map(([question, answer], i) => JSON.stringify({ id: `p${i}`, question, answer })).join('\n') +
      '\n',
  );
  // Four slots of the tiny model's 256-token context.
  server = await startLlamaServer({ model: MODEL, slots: 4, ctx: 1024 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<string> {
  const r = await startCli(args, join(dir, 'home')).done;
  expect(r.code, `stepwise ${args[0]} failed:\n${r.stderr}\n${server.log().slice(-3000)}`).toBe(0);
  return r.stdout;
}

describe('tiny policy through llama-server', () => {
  it.each(['raw', 'chat'] as const)(
    'samples, then labels under --segmentation tags (label --prompt-form %s), garbled prefixes included',
    async (form) => {
      const samples = join(dir, `samples-${form}.jsonl`);
      const policy = ['--policy', 'openai:tiny-policy', '--base-url', server.url];
      await cli([
        'sample',
        '--dataset',
        'jsonl',
        '--path',
        join(dir, 'problems.jsonl'),
        ...policy,
        '--n',
        '1',
        '--temperature',
        '1',
        '--seed',
        '0',
        '--max-tokens',
        '96',
        '--segmentation',
        'tags',
        '--out',
        samples,
        '--quiet',
      ]);
      const sampled = readFileSync(samples, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(sampled).toHaveLength(QUESTIONS.length);
      for (const r of sampled) {
        expect(r.segmentation).toBe('tags');
        expect(r.samples[0].text).toMatch(/^<chunk>/);
      }
      // A solution the network would never write: bytes outside its characters, broken arithmetic.
      const garbled = {
        id: 'garbled',
        question: QUESTIONS[0][0],
        gold: QUESTIONS[0][1],
        segmentation: 'tags',
        samples: [{ text: '<chunk>19×2=3é@@~</chunk>\n<chunk>}}{{ 7 7 \\boxed{</chunk>', correct: false }],
      };
      writeFileSync(samples, `${readFileSync(samples, 'utf8').trimEnd()}\n${JSON.stringify(garbled)}\n`);
      const labels = join(dir, `labels-${form}.jsonl`);
      const summary = JSON.parse(
        await cli([
          'label',
          '--input',
          samples,
          ...policy,
          '--prompt-form',
          form,
          '--rollouts',
          '8',
          '--signals',
          'abs-q,rel-ratio,rel-effective',
          '--max-tokens',
          '96',
          '--seed',
          '0',
          '--out',
          labels,
          '--quiet',
          '--json',
        ]),
      );
      expect(summary.segmentation).toBe('tags');
      const rows = readFileSync(labels, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rows.map((r) => r.id).sort()).toEqual(['garbled#0', 'p0#0', 'p1#0', 'p2#0', 'p3#0']);
      for (const row of rows) {
        expect(row.segmentation).toBe('tags');
        expect(row.job.settings.policy).toBe('openai:tiny-policy');
        for (const chunk of row.chunks)
          for (const signal of ['abs-q', 'rel-ratio', 'rel-effective'])
            expect(typeof chunk.labels[signal]).toBe('boolean');
      }
      // The garbled solution's first prefix was rolled out, all 8 rollouts served.
      const bad = rows.find((r) => r.id === 'garbled#0');
      expect(bad.chunks[0].rollouts).toBe(8);
      expect(summary.rollouts).toBeGreaterThanOrEqual(8);
    },
    180_000,
  );
});
