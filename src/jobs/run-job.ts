import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors.js';
import { MADE_FROM_FIELD, madeFromDigest, type ResumeVerdict } from './made-from.js';
import { OrderedOutput } from './ordered-output.js';
import { assertSameSettings, type JobSettings, type Shard, withSettings } from './settings.js';

/**
 * Where a job stands, in its unit of work (`unit`: items unless the job says, e.g. label's
 * prefixes). With a first pass (`plan`) the total is known before any work and never changes.
 */
export interface JobProgress {
  done: number;
  /** Units of the job (counted by the first pass; without one, the units seen so far). */
  total: number;
  /** Units skipped because the output already had them (resume). */
  resumed: number;
  /** What is counted, e.g. `problems`, `prefixes` (default `items`). */
  unit?: string;
  /** Items whose row was redone because their input changed. */
  redone?: number;
}

export type { Shard } from './settings.js';

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
   * a setting: it changes which rows, not what a row holds, so shard outputs merge and resume;
   * it is recorded beside the settings (`job.shard`), so `merge` can check every part was given.
   */
  settings?: JobSettings;
  /** Items in the job, when known before reading (for progress; `plan` counts them instead). */
  total?: number;
  /**
   * The same items again, read once before any work (a first pass): it counts the job's units
   * of work, so progress has its final total from the start, and compares every row already in
   * the output with its input record, so `strictResume` refuses before anything is spent.
   */
  plan?: Iterable<I> | AsyncIterable<I>;
  /** Units of work of one item (default 1), e.g. label's prefixes of a solution. */
  unitsOf?: (item: I) => number;
  /** Name of the unit progress counts (default `items`). */
  unit?: string;
  /**
   * What an item's row is made from, digested into the row's `madeFrom` (default: the item
   * itself). A row whose input's digest changed since it was written is redone, not resumed.
   */
  contentOf?: (item: I) => unknown;
  /**
   * Refuse (exit 2) instead of redoing a row whose input changed, or keeping one that records no
   * digest (an output of an older stepwise).
   */
  strictResume?: boolean;
  /** Told once when the output holds rows that record no digest (kept unverified). */
  onWarning?: (message: string) => void;
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
  /** Items whose row was kept from the output (same input, same settings). */
  resumed: number;
  /** Items whose row in the output was made from another input record: redone in this run. */
  redone: number;
  /** Rows kept that record no digest (an output written before rows did): not checked. */
  unverified: number;
  /** Items left unfinished (`process` returned undefined). */
  pending: number;
  /** Whether the output was put in input order (false when interrupted). */
  finalized: boolean;
}

/**
 * Run `process` over every input item not yet in `out`, appending each result as soon as it is
 * done (a crash loses only work in flight), then put the file in input order. Memory holds the
 * items in flight and an index of keys, offsets and digests — never the records or the whole
 * input — so a job of any size runs in memory bounded by its concurrency. Resuming scans the
 * output's keys and keeps a row only when its `madeFrom` digest is that of the input record of
 * its key now (see jobs/made-from): a row made from another input is redone.
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
  const digestOf = (item: I) => madeFromDigest(opts.contentOf ? opts.contentOf(item) : item, settings);
  const unitsOf = opts.unitsOf ?? (() => 1);
  /** The row of `key` against the input record whose digest is `digest`. */
  const verdict = (key: string, digest: string): ResumeVerdict => {
    const had = out.madeFrom(key);
    return had === null ? 'unverified' : had === digest ? 'same' : 'changed';
  };
  const progress: JobProgress = { done: 0, total: opts.total ?? 0, resumed: 0, unit: opts.unit ?? 'items' };
  let redone = 0;
  let unverified = 0;
  let resumedItems = 0;
  let doneItems = 0;
  let seenUnits = 0;
  let items = 0;
  let pending = 0;
  let failure: unknown;
  let planned = false;
  try {
    if (opts.plan) {
      const found = await firstPass(opts.plan, opts, out, digestOf, unitsOf, verdict);
      progress.total = found.units;
      planned = true;
    }
  } catch (e) {
    out.close();
    throw e;
  }
  let warnedUnverified = false;
  const refuse = (key: string, why: ResumeVerdict): never => {
    throw new UsageError(
      why === 'changed'
        ? `${opts.out}: the row of "${key}" was made from another input record than the one of that id now, and --strict-resume refuses to redo it (rerun without --strict-resume to redo the changed rows, or --fresh to start over)`
        : `${opts.out}: the row of "${key}" records no digest of its input (written by an older stepwise), so --strict-resume cannot check it (rerun without --strict-resume to keep such rows, or --fresh to start over)`,
    );
  };
  const seen = new Set<string>();
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
    // Without a first pass the total is what has been seen; with one it never moves.
    if (!planned && opts.total === undefined) progress.total = Math.max(progress.total, seenUnits);
    opts.onProgress?.({ ...progress, ...(redone ? { redone } : {}) });
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
      const units = unitsOf(got.item);
      seenUnits += units;
      const digest = digestOf(got.item);
      if (out.has(got.key)) {
        const v = verdict(got.key, digest);
        if (v !== 'same' && opts.strictResume) refuse(got.key, v);
        if (v === 'unverified') {
          unverified++;
          if (!warnedUnverified) {
            warnedUnverified = true;
            opts.onWarning?.(unverifiedWarning(opts.out));
          }
        }
        if (v !== 'changed') {
          out.place(got.key, got.position);
          progress.done += units;
          progress.resumed += units;
          resumedItems++;
          doneItems++;
          report();
          continue;
        }
        // Made from another input record: the old row goes, a new one is made.
        out.discard(got.key);
        redone++;
      }
      const record = await opts.process(got.item, got.position);
      if (opts.signal?.aborted) return;
      if (record === undefined) {
        pending++;
        continue;
      }
      const row = { ...record, [MADE_FROM_FIELD]: digest } as O;
      out.append(settings ? withSettings(row, settings, opts.shard) : row, got.position);
      progress.done += units;
      doneItems++;
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
  return {
    items,
    done: doneItems,
    resumed: resumedItems,
    redone,
    unverified,
    pending,
    finalized,
  };
}

function unverifiedWarning(out: string): string {
  return (
    `${out} holds rows written before stepwise recorded what each row is made from: they are kept ` +
    'as they are, unchecked against the input (pass --strict-resume to refuse them, or --fresh to redo everything)'
  );
}

/**
 * The first pass: every item of this shard, its units of work, and how each row already in the
 * output stands against its input record. Refuses (exit 2) before any work under strict resume.
 */
async function firstPass<I, O extends object>(
  items: Iterable<I> | AsyncIterable<I>,
  opts: StreamJobOptions<I, O>,
  out: OrderedOutput<O>,
  digestOf: (item: I) => string,
  unitsOf: (item: I) => number,
  verdict: (key: string, digest: string) => ResumeVerdict,
): Promise<{ units: number; changed: number; unverified: number }> {
  let units = 0;
  let changed = 0;
  let unverified = 0;
  let firstChanged: string | undefined;
  for await (const item of items as AsyncIterable<I>) {
    const key = opts.keyOf(item);
    if (!inShard(key, opts.shard)) continue;
    units += unitsOf(item);
    if (opts.fresh || !out.has(key)) continue;
    const v = verdict(key, digestOf(item));
    if (v === 'changed') {
      changed++;
      firstChanged ??= key;
    } else if (v === 'unverified') unverified++;
  }
  if (opts.strictResume && (changed > 0 || unverified > 0))
    throw new UsageError(
      `${opts.out}: ${changed > 0 ? `${changed} rows were made from other input records than the ones of their ids now (first: "${firstChanged}")` : ''}` +
        `${changed > 0 && unverified > 0 ? ' and ' : ''}${unverified > 0 ? `${unverified} rows record no digest of their input (written by an older stepwise)` : ''}` +
        ': --strict-resume refuses to redo or keep them (rerun without --strict-resume to redo the changed rows, or --fresh to start over)',
    );
  return { units, changed, unverified };
}

export interface JsonlJobOptions<I, O extends object>
  extends Omit<StreamJobOptions<I, O>, 'items' | 'process'> {
  items: readonly I[];
  process: (item: I, index: number) => Promise<O>;
  /** Told how the job went (resumed, redone, …) before the records are returned. */
  onFinish?: (result: StreamJobResult) => void;
}

/**
 * {@link runStreamJob} over an array, returning all records in input order: for jobs whose
 * results are needed together afterwards (small by nature, e.g. one record per problem).
 */
export async function runJsonlJob<I, O extends object>(opts: JsonlJobOptions<I, O>): Promise<O[]> {
  const records: O[] = [];
  const result = await runStreamJob<I, O>({
    ...opts,
    total: opts.total ?? opts.items.length,
    onRecord: (r) => {
      records.push(r);
      opts.onRecord?.(r);
    },
  });
  opts.onFinish?.(result);
  return records;
}
