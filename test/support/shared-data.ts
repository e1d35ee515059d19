import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Path to a file or folder under ../shared/data (or $STEPWISE_DATA). Tests over real data call
 * this; when the folder is absent the test fails with a message that says so — never a silent pass.
 */
export function sharedData(relative = ''): string {
  const root = process.env.STEPWISE_DATA ?? new URL('../../../shared/data', import.meta.url).pathname;
  const p = join(root, relative);
  if (!existsSync(p)) {
    throw new Error(
      `shared data not found at ${p}: these tests need ../shared/data (set STEPWISE_DATA to its path)`,
    );
  }
  return p;
}

/** Path under ../shared/eval (the answer-equivalence peer suite). */
export function sharedEval(relative = ''): string {
  const root = join(sharedData(), '..', 'eval');
  const p = join(root, relative);
  if (!existsSync(p)) throw new Error(`shared eval data not found at ${p}: these tests need ../shared/eval`);
  return p;
}
