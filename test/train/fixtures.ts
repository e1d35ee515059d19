import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LabeledSolution } from '../../src/train/label-file.js';
import { tempDir as trackedTempDir } from '../support/temp.js';

/** A temporary folder for one test file (removed after the file). */
export function tempDir(prefix = 'stepwise-train-'): string {
  return trackedTempDir(prefix);
}

/**
 * Labeled solutions shaped like `stepwise label` output: solution s has 4 chunks, and chunk
 * `bad[s]` (if any) is the first error; abs-q labels are positive before it, negative from it on.
 */
export function labeledFixture(count: number, bad: (s: number) => number): LabeledSolution[] {
  const rows: LabeledSolution[] = [];
  for (let s = 0; s < count; s++) {
    const b = bad(s);
    const chunks = [0, 1, 2, 3].map((i) => ({
      text: `Solution ${s}, step ${i}: compute ${s} + ${i} = ${s + i}.`,
      q: b >= 0 && i >= b ? 0 : 0.75,
      labels: {
        'abs-q': !(b >= 0 && i >= b),
        sorm: !(b >= 0 && i >= b),
        'ms-soft': b >= 0 && i >= b ? 0 : 0.75,
      },
    }));
    rows.push({
      id: `p${s}#0`,
      problem: `Problem number ${s}: what is ${s} + 3?`,
      answer: String(s + 3),
      chunks,
      firstError: { 'abs-q': b, sorm: b },
    });
  }
  return rows;
}

export function writeJsonlFile(dir: string, name: string, rows: readonly unknown[]): string {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
}
