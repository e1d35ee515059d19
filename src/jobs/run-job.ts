import pLimit from 'p-limit';
import { ResumableJsonl } from './jsonl.js';
import type { JobSettings } from './settings.js';

export interface JobProgress {
  done: number;
  total: number;
  /** Items skipped because the output already had them (resume). */
  resumed: number;
}

export interface JsonlJobOptions<I, O extends object> {
  items: readonly I[];
  /** Key of an input item; the output record for it must carry the same key (see `keyOfOutput`). */
  keyOf: (item: I) => string;
  keyOfOutput: (record: O) => string;
  out: string;
  concurrency?: number;
  /** Start over instead of resuming. */
  fresh?: boolean;
  /**
   * The job's settings: recorded on every output row, and a resumed output must have been made
   * with the same ones (exit 2 naming the differences otherwise, unless `fresh`).
   */
  settings?: JobSettings;
  process: (item: I, index: number) => Promise<O>;
  onProgress?: (p: JobProgress) => void;
  signal?: AbortSignal;
}

/**
 * Run `process` over every item not yet in `out`, appending each result as soon as it is done
 * (so a crash loses only work in flight), then rewrite the file in input order. Returns all
 * records, in input order.
 */
export async function runJsonlJob<I, O extends object>(opts: JsonlJobOptions<I, O>): Promise<O[]> {
  const out = new ResumableJsonl<O>(opts.out, opts.keyOfOutput, {
    fresh: opts.fresh,
    settings: opts.settings,
  });
  const keys = opts.items.map(opts.keyOf);
  const todo = opts.items.map((item, i) => ({ item, i })).filter(({ i }) => !out.done.has(keys[i]));
  const progress: JobProgress = {
    done: opts.items.length - todo.length,
    total: opts.items.length,
    resumed: opts.items.length - todo.length,
  };
  opts.onProgress?.({ ...progress });
  const limit = pLimit(Math.max(1, opts.concurrency ?? 8));
  try {
    await Promise.all(
      todo.map(({ item, i }) =>
        limit(async () => {
          if (opts.signal?.aborted) return;
          const record = await opts.process(item, i);
          out.append(record);
          progress.done++;
          opts.onProgress?.({ ...progress });
        }),
      ),
    );
    out.finalize(keys);
  } finally {
    out.close();
  }
  return keys.map((k) => out.done.get(k)).filter((r): r is O => r !== undefined);
}
