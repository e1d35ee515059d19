import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors.js';
import { OrderedOutput } from './ordered-output.js';
import { assertSameSettings, type JobSettings, withSettings } from './settings.js';

export interface JobProgress {
  done: number;
  /** Items of the job (when known up front; otherwise the items seen so far). */
  total: number;
  /** Items skipped because the output already had them (resume). */
  resumed: number;
}

/** Part K of N of a job (1-based): the items whose key hashes to K − 1 modulo N. */
export interface Shard {
  index: number;
  count: number;
}

/** Parse `K/N` (1 ≤ K ≤ N). */
export function parseShard(text: string, flag = '--shard'): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index < 1 || index > count)
    throw new UsageError(`${flag}: expected K/N with 1 ≤ K ≤ N (e.g. 2/8), got "${text}"`);
  return { index, count };
}

/**
 * Whether `key` belongs to `shard`: the first 4 bytes of SHA-256(key) modulo N. Depends on the key
 * alone, so N machines given the same input and N different shards split it with no overlap.
 */
export function inShard(key: string, shard: Shard | undefined): boolean {
  if (!shard || shard.count === 1) return true;
  const h = createHash('sha256').update(key).digest().readUInt32BE(0);
  return h % shard.count === shard.index - 1;
}

export interface StreamJobOptions<I, O extends object> {
  /** The input, read lazily: at most `concurrency` items are taken ahead of the work. */
  items: Iterable<I> | AsyncIterable<I>;
  /** Key of an input item; the output record for it must carry the same key (see `keyOfOutput`). */
  keyOf: (item: I) => string;
  keyOfOutput: (record: O) => string;
  out: string;
  concurrency?: number;
  /** Start over instead of resuming. */
  fresh?: boolean;
  /** Only this part of the input (by key hash). */
  shard?: Shard;
  /**
   * The job's settings: recorded on every output row, and a resumed output must have been made
   * with the same ones (exit 2 naming the differences otherwise, unless `fresh`). A shard is not
   * a setting: it changes which rows, not what a row holds, so shard outputs merge and resume.
   */
  settings?: JobSettings;
  /** Items in the job, when known before reading (for progress). */
  total?: number;
  /**
   * Work on one item. `undefined` means "not finished in this run" (e.g. its requests went to a
   * batch file): nothing is written and a later run picks it up.
   */
  process: (item: I, index: number) => Promise<O | undefined>;
  onProgress?: (p: JobProgress) => void;
  /** Each record of the finished output, in order (for summaries). */
  onRecord?: (record: O) => void;
  /** Sees each record already in the output before resuming from it; throw to refuse. */
  checkExisting?: (record: unknown, line: number) => void;
  /** Refuse a key seen twice in the input (default true; off when the reader already checks). */
  checkUniqueKeys?: boolean;
  signal?: AbortSignal;
}

export interface StreamJobResult {
  /** Input items in this job (after sharding). */
  items: number;
  /** Items whose record is in the output. */
  done: number;
  resumed: number;
  /** Items left unfinished (`process` returned undefined). */
  pending: number;
  /** Whether the output was put in input order (false when interrupted). */
  finalized: boolean;
}

/**
 * Run `process` over every input item not yet in `out`, appending each result as soon as it is
 * done (a crash loses only work in flight), then put the file in input order. Memory holds the
 * items in flight and an index of keys and offsets — never the records or the whole input — so a
 * job of any size runs in memory bounded by its concurrency. Resuming scans the output's keys.
 */
export async function runStreamJob<I, O extends object>(
  opts: StreamJobOptions<I, O>,
): Promise<StreamJobResult> {
  const settings = opts.settings;
  const out = new OrderedOutput<O>(opts.out, opts.keyOfOutput, {
    fresh: opts.fresh,
    check: (record, line) => {
      if (settings) assertSameSettings(opts.out, line, record, settings);
      opts.checkExisting?.(record, line);
      // A shard's output holds only its own keys: one from another part means the wrong --out.
      if (opts.shard && opts.shard.count > 1) {
        const key = opts.keyOfOutput(record as O);
        if (!inShard(key, opts.shard))
          throw new UsageError(
            `${opts.out}, line ${line}: "${key}" is not in --shard ${opts.shard.index}/${opts.shard.count}, so this output belongs to another part (use its own --out, or --fresh)`,
          );
      }
    },
  });
  const seen = new Set<string>();
  const progress: JobProgress = { done: 0, total: opts.total ?? 0, resumed: 0 };
  let items = 0;
  let pending = 0;
  let failure: unknown;
  const source: Iterator<I> | AsyncIterator<I> =
    Symbol.asyncIterator in opts.items
      ? (opts.items as AsyncIterable<I>)[Symbol.asyncIterator]()
      : (opts.items as Iterable<I>)[Symbol.iterator]();
  let exhausted = false;
  let position = 0;
  /** Next item of this shard with its input position, or undefined at the end. */
  const next = async (): Promise<{ item: I; key: string; position: number } | undefined> => {
    while (!exhausted) {
      const r = await source.next();
      if (r.done) {
        exhausted = true;
        break;
      }
      const key = opts.keyOf(r.value);
      if (opts.checkUniqueKeys !== false) {
        if (seen.has(key)) throw new UsageError(`duplicate item key "${key}" in the input`);
        seen.add(key);
      }
      if (!inShard(key, opts.shard)) continue;
      return { item: r.value, key, position: position++ };
    }
    return undefined;
  };
  // Pulls are serialised: a synchronous generator must not be re-entered.
  let chain: Promise<unknown> = Promise.resolve();
  const pull = () => {
    const p = chain.then(next);
    chain = p.catch(() => undefined);
    return p;
  };
  const report = () => {
    if (opts.total === undefined) progress.total = Math.max(progress.total, items);
    opts.onProgress?.({ ...progress });
  };
  // Work that settles in microtasks only (an in-process model) would never let the event loop
  // run timers and signal handlers (Ctrl-C): give it a turn every 20 ms.
  let lastTurn = Date.now();
  const worker = async () => {
    for (;;) {
      if (Date.now() - lastTurn > 20) {
        await new Promise((r) => setImmediate(r));
        lastTurn = Date.now();
      }
      if (opts.signal?.aborted || failure !== undefined) return;
      const got = await pull();
      if (!got) return;
      items++;
      if (out.has(got.key)) {
        out.place(got.key, got.position);
        progress.done++;
        progress.resumed++;
        report();
        continue;
      }
      const record = await opts.process(got.item, got.position);
      if (opts.signal?.aborted) return;
      if (record === undefined) {
        pending++;
        continue;
      }
      out.append(settings ? withSettings(record, settings) : record, got.position);
      progress.done++;
      report();
    }
  };
  let finalized = false;
  try {
    report();
    await Promise.all(
      Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, () =>
        worker().catch((e) => {
          failure ??= e;
        }),
      ),
    );
    if (failure !== undefined) throw failure;
    if (!opts.signal?.aborted) {
      out.finalize(opts.onRecord);
      finalized = true;
    }
  } finally {
    out.close();
  }
  return { items, done: progress.done, resumed: progress.resumed, pending, finalized };
}

export interface JsonlJobOptions<I, O extends object>
  extends Omit<StreamJobOptions<I, O>, 'items' | 'process'> {
  items: readonly I[];
  process: (item: I, index: number) => Promise<O>;
}

/**
 * {@link runStreamJob} over an array, returning all records in input order: for jobs whose
 * results are needed together afterwards (small by nature, e.g. one record per problem).
 */
export async function runJsonlJob<I, O extends object>(opts: JsonlJobOptions<I, O>): Promise<O[]> {
  const records: O[] = [];
  await runStreamJob<I, O>({
    ...opts,
    total: opts.total ?? opts.items.length,
    onRecord: (r) => {
      records.push(r);
      opts.onRecord?.(r);
    },
  });
  return records;
}
