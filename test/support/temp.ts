import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Folders made by {@link tempDir} in this test file (each file runs in its own module graph). */
const made = new Set<string>();

/**
 * A fresh folder under the system temp dir, removed after the test file by the setup file
 * (test/support/temp-cleanup.ts), whether or not the test that made it passed.
 */
export function tempDir(prefix = 'stepwise-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Remove every folder {@link tempDir} made so far. */
export function removeTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}
