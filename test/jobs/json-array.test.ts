import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProcessBench } from '../../src/data/processbench.js';
import { scorePredictions } from '../../src/evaluate/processbench.js';
import { readJsonl } from '../../src/jobs/jsonl.js';
import { streamJsonl } from '../../src/jobs/lines.js';
import { loadEquivalenceCases } from '../../src/verify/cases.js';
import { BIN } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

// The official ProcessBench subset files are pretty-printed JSON arrays: their first line is `[`.
// Where a command reads JSONL, it must say what the file is, never "not valid JSON" (issue #27).
const official = () => sharedData('processbench/gsm8k.json');
const SAYS = /line 1: a JSON array holding ProcessBench-format rows .*not JSONL/;

describe('the official ProcessBench <subset>.json given where JSONL is read', () => {
  it('every JSONL reader names it a JSON array of ProcessBench rows', async () => {
    const file = official();
    const calls: Array<() => unknown> = [
      () => [...streamJsonl(file)],
      () => readJsonl(file),
      () => loadEquivalenceCases(file),
    ];
    const dataset = (await loadProcessBench({ path: file, limit: 3 })).records;
    calls.push(() => scorePredictions(file, dataset));
    for (const call of calls) {
      expect(call).toThrow(/a JSON array holding ProcessBench-format rows/);
      expect(call).not.toThrow(/not valid JSON/);
    }
  });

  it('label --input and select --input say so too (exit 2)', () => {
    const dir = tempDir('stepwise-json-array-');
    for (const args of [
      ['label', '--input', official(), '--policy', 'sim', '--out', 'l.jsonl'],
      ['select', '--input', official(), '--judge', 'sim:generative', '--out', 's.jsonl'],
    ]) {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, STEPWISE_HOME: join(dir, '.stepwise'), STEPWISE_QUIET: '1' },
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(SAYS);
      expect(r.stderr).not.toContain('not valid JSON');
    }
  });
});
