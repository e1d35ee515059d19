import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { StepwiseError } from '../core/errors.js';

/**
 * The cache folder `stepwise data pull` downloads into, laid out like `$STEPWISE_DATA`
 * (`<cache>/gsm8k/test.jsonl`, `<cache>/processbench/math.json`, …):
 * `$STEPWISE_CACHE/data` when set, else `$XDG_CACHE_HOME/stepwise/data`, else `~/.cache/stepwise/data`.
 */
export function dataCacheDir(): string {
  if (process.env.STEPWISE_CACHE) return resolve(process.env.STEPWISE_CACHE, 'data');
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return resolve(base, 'stepwise', 'data');
}

/** The folders searched, in order, when a loader gets no path: `$STEPWISE_DATA`, then the pull cache. */
export function dataRoots(): string[] {
  const roots: string[] = [];
  if (process.env.STEPWISE_DATA) roots.push(resolve(process.env.STEPWISE_DATA));
  roots.push(dataCacheDir());
  return roots;
}

/**
 * The first existing `<root>/<candidate>` over {@link dataRoots} × `candidates` (paths relative
 * to a data root). Throws a {@link StepwiseError} (exit 2) listing what was tried.
 */
export function findDataPath(name: string, candidates: readonly string[]): string {
  const tried: string[] = [];
  for (const root of dataRoots()) {
    for (const c of candidates) {
      const p = join(root, c);
      if (existsSync(p)) return p;
      tried.push(p);
    }
  }
  throw new StepwiseError(
    `no ${name} data found; pass --path, set STEPWISE_DATA, or run \`stepwise data pull ${name}\`. Tried: ${tried.join(', ')}`,
    { exitCode: 2 },
  );
}

/**
 * The file (or folder) a loader reads. With `path`: that path, or when it is a folder, the
 * first of `files` inside it. Without: `<root>/<folder>/<file>` over {@link dataRoots}.
 * `files` empty means the loader reads the folder itself.
 */
export function resolveDataPath(
  name: string,
  path: string | undefined,
  folder: string,
  files: readonly string[],
): string {
  if (path !== undefined) {
    const p = resolve(path);
    if (!existsSync(p)) throw new StepwiseError(`${p}: file not found`, { exitCode: 2 });
    if (files.length === 0 || !statSync(p).isDirectory()) return p;
    for (const f of files) if (existsSync(join(p, f))) return join(p, f);
    throw new StepwiseError(`${p}: a folder without ${files.join(' or ')}; pass the file itself`, {
      exitCode: 2,
    });
  }
  const candidates = files.length === 0 ? [folder] : files.map((f) => join(folder, f));
  return findDataPath(name, candidates);
}
