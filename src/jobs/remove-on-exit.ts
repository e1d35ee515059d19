import { rmSync } from 'node:fs';

/** Unfinished output files of this process, removed if it exits before they are put in place. */
const unfinished = new Set<string>();
let exitHook = false;

/**
 * Note `tmp` as unfinished until the returned function is called: a process that exits first
 * (Ctrl-C: the job harness records the run and exits 130, skipping every `finally`) removes it,
 * so an interrupted job leaves neither a half-written output nor its temporary file.
 */
export function removeOnExit(tmp: string): () => void {
  unfinished.add(tmp);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const f of unfinished) rmSync(f, { force: true });
    });
  }
  return () => {
    unfinished.delete(tmp);
  };
}
