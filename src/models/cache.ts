import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import type { Db } from '../store/db.js';
import { deriveSeed } from './seeds.js';
import type {
  CallOptions,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  Sample,
  ScoreResult,
  Usage,
} from './types.js';

export { canonicalJson };

/**
 * The model-call cache: every sample is stored under (backend, what served it, model, full
 * request without `n`, sample index) in the store's `cache` table. "What served it" is the
 * model's `origin` (for HTTP backends the set of endpoint base URLs): a model of the same name
 * behind another server is another model, and its answers are never reused for this one.
 * so a rerun or a resumed job makes no model
 * call for anything it already received, and asking for more samples than before only requests
 * the missing ones. A response is committed (one transaction for its n samples) before the
 * caller sees it: WAL commits survive a SIGKILL of the process.
 */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The key prefix of a generate request: sample i lives at `${prefix}${i}`. */
export function generateKeyPrefix(
  provider: string,
  modelId: string,
  request: GenerateRequest,
  origin?: string,
): string {
  const { n: _n, ...rest } = request;
  return `gen:${sha256(canonicalJson({ provider, origin, model: modelId, request: rest }))}:`;
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

/** The cache counters of `model` (summed over several), or undefined when none is cached. */
export function cacheStatsOf(...models: Array<LanguageModel | undefined>): CacheStats | undefined {
  let total: CacheStats | undefined;
  const seen = new Set<LanguageModel>();
  for (const m of models) {
    if (!m || seen.has(m)) continue;
    seen.add(m);
    const stats = (m as Partial<CachedModel>).cacheStats?.();
    if (!stats) continue;
    total ??= { hits: 0, misses: 0, calls: 0, cachedCalls: 0 };
    for (const k of ['hits', 'misses', 'calls', 'cachedCalls'] as const) total[k] += stats[k];
  }
  return total;
}

/** A `LanguageModel` that reads and writes the store's cache around another one. */
export interface CachedModel extends LanguageModel {
  readonly inner: LanguageModel;
  cacheStats(): CacheStats;
}

const ZERO_USAGE: Usage = { calls: 0, promptTokens: 0, completionTokens: 0 };

/**
 * Wrap `model` with the SQLite cache in `db`. `CallOptions.noCache` bypasses it for one call
 * (neither read nor written).
 */
export function withCache(model: LanguageModel, db: Db): CachedModel {
  const selectRange = db.prepare<[string, string], { key: string; value: string }>(
    'SELECT key, value FROM cache WHERE key >= ? AND key < ?',
  );
  const selectOne = db.prepare<[string], { value: string }>('SELECT value FROM cache WHERE key = ?');
  const insert = db.prepare<[string, string, number]>(
    'INSERT OR REPLACE INTO cache (key, value, created_at) VALUES (?, ?, ?)',
  );
  const insertMany = db.transaction((rows: Array<[string, string]>) => {
    const now = Date.now();
    for (const [k, v] of rows) insert.run(k, v, now);
  });
  const stats: CacheStats = { hits: 0, misses: 0, calls: 0, cachedCalls: 0 };

  /** Samples 0..k-1 that are cached contiguously from index 0. */
  function cachedSamples(prefix: string, n: number): Sample[] {
    // ';' sorts right after ':' so the range holds exactly this prefix's keys.
    const rows = selectRange.all(prefix, `${prefix.slice(0, -1)};`);
    const byIndex = new Map<number, Sample>();
    for (const r of rows) byIndex.set(Number(r.key.slice(prefix.length)), JSON.parse(r.value) as Sample);
    const out: Sample[] = [];
    for (let i = 0; i < n && byIndex.has(i); i++) out.push(byIndex.get(i)!);
    return out;
  }

  const cached: CachedModel = {
    specificationVersion: 'v1',
    provider: model.provider,
    modelId: model.modelId,
    origin: model.origin,
    capabilities: model.capabilities,
    inner: model,
    cacheStats: () => ({ ...stats }),

    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      if (options.noCache) return model.generate(request, options);
      const n = Math.max(1, request.n ?? 1);
      const prefix = generateKeyPrefix(model.provider, model.modelId, request, model.origin);
      const have = cachedSamples(prefix, n);
      stats.hits += have.length;
      stats.calls++;
      if (have.length === n) {
        stats.cachedCalls++;
        return { samples: have, usage: { ...ZERO_USAGE }, warnings: [], cached: true };
      }
      const offset = have.length;
      stats.misses += n - offset;
      // The missing tail is a new block of samples: it gets its own derived seed.
      const result = await model.generate(
        { ...request, n: n - offset, seed: deriveSeed(request.seed, offset) },
        options,
      );
      const fresh = result.samples.slice(0, n - offset);
      insertMany(fresh.map((s, j) => [`${prefix}${offset + j}`, JSON.stringify(s)]));
      return { ...result, samples: [...have, ...fresh], cached: false };
    },
  };

  if (model.score) {
    const score = model.score.bind(model);
    cached.score = async (prefixText: string, continuation: string, options: CallOptions = {}) => {
      if (options.noCache) return score(prefixText, continuation, options);
      const key = `score:${sha256(canonicalJson({ provider: model.provider, origin: model.origin, model: model.modelId, prefixText, continuation }))}`;
      const row = selectOne.get(key);
      stats.calls++;
      if (row) {
        stats.hits++;
        stats.cachedCalls++;
        return { ...(JSON.parse(row.value) as ScoreResult), usage: { ...ZERO_USAGE } };
      }
      stats.misses++;
      const result = await score(prefixText, continuation, options);
      insert.run(key, JSON.stringify(result), Date.now());
      return result;
    };
  }

  if (model.pool) {
    const pool = model.pool.bind(model);
    cached.pool = async (input: string, options: CallOptions = {}) => {
      if (options.noCache) return pool(input, options);
      const key = `pool:${sha256(canonicalJson({ provider: model.provider, origin: model.origin, model: model.modelId, input }))}`;
      const row = selectOne.get(key);
      stats.calls++;
      if (row) {
        stats.hits++;
        stats.cachedCalls++;
        return { data: JSON.parse(row.value) as number[][], usage: { ...ZERO_USAGE } };
      }
      stats.misses++;
      const result = await pool(input, options);
      insert.run(key, JSON.stringify(result.data), Date.now());
      return result;
    };
  }

  if (model.close) cached.close = () => model.close!();
  return cached;
}
