import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * What the guards over src/ read (layers, option declarations, the simulated-world ledger,
 * the warning route): its .ts files, and their code with the comments blanked, so that a
 * comment naming a function is not a call of it.
 */

/** The project's src/ folder. */
export const SRC = resolve(import.meta.dirname, '../../src');

/** Every .ts file under `dir` (src/ by default), as absolute paths. */
export function sourceFiles(dir: string = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** A file's code with its comments blanked: block comments become spaces (lines kept), line comments go. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
}

export interface SourceCode {
  /** The path inside src/, e.g. `cli/warn.ts`. */
  file: string;
  /** Its code, comments blanked. */
  text: string;
}

let cached: SourceCode[] | undefined;

/** The code of every file in src/, comments blanked (read once per test file). */
export function sourceCode(): SourceCode[] {
  cached ??= sourceFiles().map((path) => ({
    file: relative(SRC, path),
    text: withoutComments(readFileSync(path, 'utf8')),
  }));
  return cached;
}

/** Where `pattern` (a /g regex) occurs in the code of src/, as file names, one per occurrence; `keep` picks the files. */
export function where(pattern: RegExp, keep: (file: string) => boolean = () => true): string[] {
  return sourceCode()
    .filter(({ file }) => keep(file))
    .flatMap(({ file, text }) => [...text.matchAll(pattern)].map(() => file));
}
