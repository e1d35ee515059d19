import { spawn } from 'node:child_process';
import { StepwiseError } from '../core/errors.js';
import { MUTATION_KIND_NAMES } from '../data/record-kinds.js';
import { pythonAsset, resolvePython } from '../verify/code/sandbox.js';

/** The kinds of syntax-tree mutation (python/stepwise_mutate.py), as label-code rows declare them. */
export type MutationKind = (typeof MUTATION_KIND_NAMES)[number];

export const MUTATION_KINDS: readonly MutationKind[] = MUTATION_KIND_NAMES;

/** One mutant of a reference solution: one syntax-tree node changed, the rest of the text untouched. */
export interface Mutant {
  kind: MutationKind;
  /** What changed, e.g. `< -> <=`, `range stop +1`, `removed line 4: total += x`. */
  description: string;
  /** 1-based line of the change in the mutant's text (for `drop`: where the removed statement was). */
  line: number;
  /** True when a statement was removed. */
  dropped: boolean;
  code: string;
}

/** Mutants of one program, or why there are none (the code does not parse). */
export type MutantsOf = { mutants: Mutant[]; error?: undefined } | { mutants?: undefined; error: string };

/**
 * All single-node mutants of each program (arithmetic and bitwise operators, comparisons,
 * integer / boolean / string constants, off-by-one in `range()` stops and slice bounds, `and`/`or`,
 * `not`, `min`/`max` and `any`/`all` swaps, dropped statements), in source order. One Python
 * process handles the whole batch (Python's own `ast` parser, so the mutants are exactly the
 * programs Python would run). Keys of the result are the input ids.
 */
export async function generateMutants(
  programs: ReadonlyArray<{ id: string; code: string }>,
  options: { python?: string } = {},
): Promise<Map<string, MutantsOf>> {
  const { executable } = resolvePython(options.python);
  const input = programs.map((p) => JSON.stringify({ id: p.id, code: p.code })).join('\n');
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(executable, ['-B', '-s', '-S', pythonAsset('stepwise_mutate.py')], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => {
      if (err.length < 4000) err += b.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        reject(new StepwiseError(`mutation helper failed (exit ${code}): ${err.trim().slice(0, 500)}`));
      else resolve(Buffer.concat(out).toString('utf8'));
    });
    child.stdin.on('error', () => {
      // reported through 'close'
    });
    child.stdin.end(`${input}\n`);
  });
  const result = new Map<string, MutantsOf>();
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { id: string; mutants?: Mutant[]; error?: string };
    result.set(row.id, row.error !== undefined ? { error: row.error } : { mutants: row.mutants ?? [] });
  }
  return result;
}
