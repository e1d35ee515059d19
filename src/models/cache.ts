import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib';
import { canonicalJson } from '../core/canonical-json.js';
import type {
  CallOptions,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  Sample,
  ScoreResult,
  Usage,
} from '../core/model.js';
import type { Db } from '../store/db.js';
import { extractAnswer } from '../verify/extract.js';
import { type ModelMiddleware, middlewareOf, type WrappedModel, wrapModel } from './middleware.js';
import { deriveSeed } from './seeds.js';

export { canonicalJson };

/**
 * The model-call cache: the samples of a request are stored under (backend, model, full
 * request without `n`) in the store's `samples` table, so a rerun or a resumed job makes no
 * model call for anything it already received, and asking for more samples than before only
 * requests the missing ones. A response is committed before the caller sees it: WAL commits
 * survive a SIGKILL of the process.
 *
 * Kept small for jobs of 10^8 rollouts: one row per request (not per sample) under a 16-byte
 * key, the samples brotli-compressed together (samples of one prompt share most of their text),
 * fields at their default left out. `verdicts` mode keeps only what a label rerun needs of each
 * rollout — its final answer, token count and finish reason — not its text.
 */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The key prefix of a generate request (what it is stored under: see `rowKey`). "What served
 * it" is the model's `origin` (for HTTP backends the set of endpoint base URLs) and its `fingerprint`
 * (what `GET /v1/models` says of the model there): a model of the same name behind another server,
 * or another model swapped in behind the same URL and name, is another model, and its answers are
 * never reused for this one.
 */
export function generateKeyPrefix(
  provider: string,
  modelId: string,
  request: GenerateRequest,
  origin?: string,
  fingerprint?: string,
): string {
  const { n: _n, ...rest } = request;
  return `gen:${sha256(canonicalJson({ provider, origin, fingerprint, model: modelId, request: rest }))}:`;
}

/** Counters of one cached model. */
export interface CacheStats {
  /** Samples (and scores, pools) served from the cache. */
  hits: number;
  /** Samples (and scores, pools) requested from the model. */
  misses: number;
  /** Calls made through the cache. */
  calls: number;
  /** Calls answered entirely from the cache (no model request). */
  cachedCalls: number;
}

/** The call cache as a middleware: its counters beside its hooks. */
export interface CacheMiddleware extends ModelMiddleware {
  readonly name: 'cache';
  stats(): CacheStats;
}

/** The cache counters of `model` (summed over several), or undefined when none is cached. */
export function cacheStatsOf(...models: Array<LanguageModel | undefined>): CacheStats | undefined {
  let total: CacheStats | undefined;
  const seen = new Set<CacheMiddleware>();
  for (const m of models) {
    if (!m) continue;
    for (const layer of middlewareOf(m)) {
      if (layer.name !== 'cache' || seen.has(layer as CacheMiddleware)) continue;
      seen.add(layer as CacheMiddleware);
      const stats = (layer as CacheMiddleware).stats();
      total ??= { hits: 0, misses: 0, calls: 0, cachedCalls: 0 };
      for (const k of ['hits', 'misses', 'calls', 'cachedCalls'] as const) total[k] += stats[k];
    }
  }
  return total;
}

/** A `LanguageModel` that reads and writes the store's cache around another one. */
export interface CachedModel extends WrappedModel {
  cacheStats(): CacheStats;
}

const ZERO_USAGE: Usage = { calls: 0, promptTokens: 0, completionTokens: 0 };

/**
 * What the cache keeps of each sample. `full`: everything (text, finish, tokens, logprobs).
 * `verdicts`: the answer extracted from the text, the token count and the finish reason; a
 * hit gives back the text `\boxed{answer}` (or "" when the rollout had no answer), so a checker
 * reaches the same verdict without the rollout's text being stored.
 */
export type CacheMode = 'full' | 'verdicts';

const FULL = 1;
const VERDICTS = 2;

/** The 16-byte row key of a request's key prefix. */
function rowKey(prefix: string): Buffer {
  return createHash('sha256').update(prefix).digest().subarray(0, 16);
}

type StoredSample = {
  x?: string;
  a?: string | null;
  f?: Sample['finishReason'];
  t?: number;
  s?: string | null;
  l?: Sample['logprobs'];
  /** 1: the simulated world wrote it (a marked sim-server reply); a cached copy stays marked. */
  m?: 1;
};

/** Samples as one compressed row value: a mode byte, then brotli(JSON) of the compact samples. */
export function encodeSamples(samples: readonly Sample[], mode: CacheMode): Buffer {
  const compact = samples.map((x): StoredSample => {
    const o: StoredSample = {};
    if (mode === 'full') {
      o.x = x.text;
      if (x.stopReason !== undefined) o.s = x.stopReason;
      if (x.logprobs) o.l = x.logprobs;
    } else o.a = extractAnswer(x.text);
    if (x.finishReason !== 'stop') o.f = x.finishReason;
    if (x.completionTokens) o.t = x.completionTokens;
    if (x.simulated) o.m = 1;
    return o;
  });
  const packed = brotliCompressSync(JSON.stringify(compact), {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 6, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT },
  });
  return Buffer.concat([Buffer.of(mode === 'full' ? FULL : VERDICTS), packed]);
}

/** The samples of a row, or null when the row cannot serve `mode` (texts asked, verdicts stored). */
export function decodeSamples(value: Buffer, mode: CacheMode): Sample[] | null {
  const kind = value[0];
  if (kind !== FULL && kind !== VERDICTS) return null;
  if (kind === VERDICTS && mode === 'full') return null;
  const compact = JSON.parse(brotliDecompressSync(value.subarray(1)).toString('utf8')) as StoredSample[];
  return compact.map((o) => {
    const text = kind === FULL ? (o.x ?? '') : o.a === null || o.a === undefined ? '' : `\\boxed{${o.a}}`;
    const sample: Sample = { text, finishReason: o.f ?? 'stop', completionTokens: o.t ?? 0 };
    if (o.m === 1) sample.simulated = true;
    if (kind === FULL && mode === 'verdicts') {
      // A full row serving a verdicts run: hand over the same reduced text a verdicts row would.
      const a = extractAnswer(sample.text);
      sample.text = a === null ? '' : `\\boxed{${a}}`;
      return sample;
    }
    if (o.s !== undefined) sample.stopReason = o.s;
    if (o.l) sample.logprobs = o.l;
    return sample;
  });
}

/**
 * Wrap `model` with the SQLite cache in `db` (the model with {@link cacheMiddleware} around it).
 * `CallOptions.noCache` bypasses it for one call (neither read nor written).
 */
export function withCache(model: LanguageModel, db: Db, options: { mode?: CacheMode } = {}): CachedModel {
  const cache = cacheMiddleware(db, options);
  return withCacheStats(wrapModel(model, cache), cache);
}

/** `wrapped` answering `cacheStats()` with the counters of `cache`, one of its middleware. */
export function withCacheStats(wrapped: WrappedModel, cache: CacheMiddleware): CachedModel {
  return Object.assign(wrapped, { cacheStats: () => cache.stats() });
}

/**
 * The model-call cache as a middleware over the store `db`. Keys are made of the model under all
 * middleware (its provider, id, origin and fingerprint), so where the cache sits in a chain never
 * changes what a call is stored under.
 */
export function cacheMiddleware(db: Db, options: { mode?: CacheMode } = {}): CacheMiddleware {
  const mode = options.mode ?? 'full';
  const selectRow = db.prepare<[Buffer], { value: Buffer }>('SELECT value FROM samples WHERE key = ?');
  const upsertRow = db.prepare<[Buffer, number, Buffer]>(
    'INSERT OR REPLACE INTO samples (key, n, value) VALUES (?, ?, ?)',
  );
  // Stores written before the samples table kept one row per sample in `cache`: still read.
  const selectLegacy = db.prepare<[string, string], { key: string; value: string }>(
    'SELECT key, value FROM cache WHERE key >= ? AND key < ?',
  );
  const selectOne = db.prepare<[string], { value: string }>('SELECT value FROM cache WHERE key = ?');
  const insert = db.prepare<[string, string, number]>(
    'INSERT OR REPLACE INTO cache (key, value, created_at) VALUES (?, ?, ?)',
  );
  const stats: CacheStats = { hits: 0, misses: 0, calls: 0, cachedCalls: 0 };
  /** What serves the model (asked of the backend; undefined where it cannot say). */
  const fingerprint = (model: LanguageModel, options: CallOptions): Promise<string | undefined> =>
    model.fingerprint ? model.fingerprint(options) : Promise.resolve(undefined);

  /** Samples 0..k-1 that are cached contiguously from index 0. */
  function cachedSamples(prefix: string, key: Buffer): Sample[] {
    const row = selectRow.get(key);
    if (row) return decodeSamples(row.value, mode) ?? [];
    // ';' sorts right after ':' so the range holds exactly this prefix's keys.
    const rows = selectLegacy.all(prefix, `${prefix.slice(0, -1)};`);
    const byIndex = new Map<number, Sample>();
    for (const r of rows) byIndex.set(Number(r.key.slice(prefix.length)), JSON.parse(r.value) as Sample);
    const out: Sample[] = [];
    for (let i = 0; byIndex.has(i); i++) out.push(byIndex.get(i)!);
    if (mode === 'verdicts') return decodeSamples(encodeSamples(out, 'verdicts'), 'verdicts')!;
    return out;
  }

  return {
    name: 'cache',
    stats: () => ({ ...stats }),

    async generate({ request, options, model }, next): Promise<GenerateResult> {
      if (options.noCache) return next(request, options);
      const n = Math.max(1, request.n ?? 1);
      const prefix = generateKeyPrefix(
        model.provider,
        model.modelId,
        request,
        model.origin,
        await fingerprint(model, options),
      );
      const key = rowKey(prefix);
      const stored = cachedSamples(prefix, key);
      const have = stored.slice(0, n);
      stats.hits += have.length;
      stats.calls++;
      if (have.length === n) {
        stats.cachedCalls++;
        return { samples: have, usage: { ...ZERO_USAGE }, warnings: [], cached: true };
      }
      const offset = have.length;
      stats.misses += n - offset;
      // The missing tail is a new block of samples: it gets its own derived seed.
      const result = await next(
        { ...request, n: n - offset, seed: deriveSeed(request.seed, offset) },
        options,
      );
      const fresh = result.samples.slice(0, n - offset);
      const all = [...have, ...fresh];
      upsertRow.run(key, all.length, encodeSamples(all, mode));
      // What the caller gets is what a rerun would get from the cache.
      const samples = mode === 'verdicts' ? decodeSamples(encodeSamples(all, mode), mode)! : all;
      return { ...result, samples, cached: false };
    },

    async score({ prefix: prefixText, continuation, options, model }, next): Promise<ScoreResult> {
      if (options.noCache) return next(prefixText, continuation, options);
      const served = await fingerprint(model, options);
      const key = `score:${sha256(canonicalJson({ provider: model.provider, origin: model.origin, fingerprint: served, model: model.modelId, prefixText, continuation }))}`;
      const row = selectOne.get(key);
      stats.calls++;
      if (row) {
        stats.hits++;
        stats.cachedCalls++;
        return { ...(JSON.parse(row.value) as ScoreResult), usage: { ...ZERO_USAGE } };
      }
      stats.misses++;
      const result = await next(prefixText, continuation, options);
      insert.run(key, JSON.stringify(result), Date.now());
      return result;
    },

    async pool({ input, options, model }, next) {
      if (options.noCache) return next(input, options);
      const served = await fingerprint(model, options);
      const key = `pool:${sha256(canonicalJson({ provider: model.provider, origin: model.origin, fingerprint: served, model: model.modelId, input }))}`;
      const row = selectOne.get(key);
      stats.calls++;
      if (row) {
        stats.hits++;
        stats.cachedCalls++;
        return { data: JSON.parse(row.value) as number[][], usage: { ...ZERO_USAGE } };
      }
      stats.misses++;
      const result = await next(input, options);
      insert.run(key, JSON.stringify(result.data), Date.now());
      return result;
    },
  };
}
