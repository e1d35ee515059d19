import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { StepwiseError } from '../core/errors.js';
import { splitFromFile } from './gsm8k.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions, ProcessBenchRecord } from './types.js';

/** The four ProcessBench subsets, in the paper's order; each is one JSON array `<subset>.json`. */
export const PROCESSBENCH_SUBSETS = ['gsm8k', 'math', 'olympiadbench', 'omnimath'] as const;

const ProcessBenchRow = z.object({
  id: z.string().min(1),
  generator: z.string(),
  problem: z.string().min(1),
  steps: z.array(z.string()).min(1),
  final_answer_correct: z.boolean(),
  label: z.number().int().min(-1),
});

/** The subset files to read: one file, or the subset files found in a folder (`split` picks one). */
function processBenchFiles(path: string, split: string | undefined): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const wanted = split ? [split] : [...PROCESSBENCH_SUBSETS];
  const files = wanted.map((s) => join(path, `${s}.json`)).filter((f) => existsSync(f));
  if (files.length === 0)
    throw new StepwiseError(`${path}: no ProcessBench files (${wanted.map((s) => `${s}.json`).join(', ')})`, {
      exitCode: 2,
    });
  return files;
}

/**
 * ProcessBench: a folder holding `gsm8k.json`, `math.json`, `olympiadbench.json`, `omnimath.json`
 * (JSON arrays; read in that order, `split` picks one subset) or one such file. Bad records name
 * the file, array index and field. `subset` is the file's name.
 */
export async function loadProcessBench(options: LoadOptions = {}): Promise<Loaded<ProcessBenchRecord>> {
  return loadSource(processBenchSource(options));
}

/** {@link loadProcessBench}'s records, read one at a time (the subset files one after another). */
export function processBenchSource(options: LoadOptions = {}): RecordSource<ProcessBenchRecord> {
  const path = resolveDataPath('processbench', options.path, 'processbench', []);
  const files = processBenchFiles(path, options.split);
  async function* read(hooks?: { onSkipped?: () => void }): AsyncGenerator<ProcessBenchRecord> {
    let count = 0;
    for (const file of files) {
      const remaining = options.limit === undefined ? undefined : options.limit - count;
      if (remaining !== undefined && remaining <= 0) return;
      const subset = splitFromFile(file);
      for await (const record of recordStream(
        file,
        ProcessBenchRow,
        (row): ProcessBenchRecord => {
          if (row.label >= row.steps.length)
            throw new RecordProblem(
              'label',
              `label ${row.label} points past the last step (${row.steps.length} steps)`,
            );
          return { ...row, subset };
        },
        { ...options, ...hooks, limit: remaining },
      )) {
        count++;
        yield record;
      }
    }
  }
  return { path, read };
}
