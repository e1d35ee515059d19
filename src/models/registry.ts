import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { LanguageModel, World } from '../core/model.js';
import {
  checkSettings,
  type SettingField,
  type SettingsSchema,
  settingFields,
} from '../core/settings-schema.js';
import { queryEntries, queryKeyOf, queryValue } from '../core/spec-query.js';
import { openStore } from '../store/db.js';
import type { BatchExchange } from './batch.js';
import { type CacheMode, cacheMiddleware, withCacheStats } from './cache.js';
import { type ModelMiddleware, wrapModel } from './middleware.js';
import { type WarningSink, warningsMiddleware } from './warnings.js';

/** A parsed model spec: the provider's name and what follows it. */
export interface ModelSpec {
  /** Provider name in the registry: `openai`, `gguf`, `sim`, … */
  provider: string;
  /** What follows `provider:` (the model name, file, …); empty when the spec is the bare name. */
  id: string;
  /** The whole spec, trimmed (a provider with its own syntax, like `sim?step_error=0.2`, reads this). */
  spec: string;
}

/**
 * What a model is made with besides its provider's settings: how the registry wraps it (the call
 * cache, the warning sink) and batch files. The same for every backend.
 */
export interface ModelContext {
  /** Do not wrap the model in the SQLite call cache. */
  noCache?: boolean;
  /** Store file of the cache (default `$STEPWISE_HOME/store.sqlite`). */
  storePath?: string;
  /** What the call cache keeps of each sample (default `full`; see `cache.ts`). */
  cacheMode?: CacheMode;
  /** Where the model's warnings go, each once (the CLI prints them; see `warnings.ts`). */
  onWarning?: WarningSink;
  /** Generate requests go through batch files (only providers with `batch`; see `batch.ts`). */
  batch?: BatchExchange;
}

/**
 * Options of {@link ProviderRegistry.languageModel}: the context, and backend settings by field
 * name (the CLI's `--concurrency`, `--threads`, `--base-url`, …). A provider takes the keys its
 * schema declares and leaves the others (they are other backends'); a spec's query overrides
 * none of what is given here (a flag beats the spec).
 */
export interface ModelOptions extends ModelContext {
  settings?: Readonly<Record<string, unknown>>;
}

/**
 * A model backend: one value the registry knows by name, with its own settings schema (zod, with
 * defaults and help: see `core/settings-schema.ts`). A spec's query (`gguf:m.gguf?threads=2`)
 * is read against that schema: the key is the field's name in snake_case (`timeout_ms`), or an
 * alias. `create` gets the settings parsed, defaults filled in.
 */
export interface ModelProvider<S extends SettingsSchema = SettingsSchema> {
  /** How a spec of this provider is written, for error messages and docs (`openai:<model>`). */
  readonly usage: string;
  /** One sentence for docs/models.md. */
  readonly description: string;
  /** The backend's settings. */
  readonly settings: S;
  /** Extra query keys for fields (`sens` → `sensitivity`). */
  readonly aliases?: Readonly<Record<string, string>>;
  /**
   * Fields that may not be written in a spec (specs are recorded in outputs and run records: a
   * server URL or key there would leak): they come from options (flags, environment) only.
   */
  readonly notInSpec?: readonly string[];
  /**
   * What becomes of query keys the schema does not declare: `error` (default: a typo is never
   * dropped), or `model-name` (they stay part of the model's id, as the served name of an
   * OpenAI-compatible server may carry its own query: `openai:sim?step_error=0.2`).
   */
  readonly otherQueryKeys?: 'error' | 'model-name';
  /** Wrap its models in the SQLite call cache (false where a call costs less than a lookup). */
  readonly cached: boolean;
  /** It can carry generate requests in batch files (`--batch-out` / `--batch-in`). */
  readonly batch?: boolean;
  /** Which world the spec's model is (default `real`). */
  world?(spec: ModelSpec): World;
  create(
    spec: ModelSpec,
    settings: z.infer<S>,
    context: ModelContext,
  ): Promise<LanguageModel> | LanguageModel;
}

/** A provider, whatever its schema (what the registry holds). */
// biome-ignore lint/suspicious/noExplicitAny: a provider of any settings
export type AnyModelProvider = ModelProvider<any>;

/**
 * The providers, as a value: `createProviderRegistry({ openai, gguf, sim })`. Built once by a
 * composition root (the CLI, the library entry: `src/providers/default.ts`) and handed down to
 * whatever turns spec strings into models.
 */
export interface ProviderRegistry {
  /** Provider names, sorted. */
  names(): string[];
  /** The provider called `name`, if any. */
  provider(name: string): AnyModelProvider | undefined;
  /** Parse a spec; its provider must be in the registry. */
  parse(spec: string): ModelSpec;
  /** The provider's settings of `spec`: defaults, then `options.settings`... the spec's query below them. */
  settingsOf(spec: string, settings?: Readonly<Record<string, unknown>>): Record<string, unknown>;
  /** Which world the spec's model is (`real`, `tiny`, `sim`). */
  worldOf(spec: string): World;
  /**
   * Build a model from a spec string — the one way every area (label, judge, search, sample)
   * gets a model. Models of a provider with `cached` go through the SQLite call cache unless
   * `noCache`; with `onWarning` its warnings reach that sink, each once.
   */
  languageModel(spec: string, options?: ModelOptions): Promise<LanguageModel>;
}

/** The provider's name in a spec: everything up to the first `:`, `?` or `[` (`sim?step_error=0.2` names `sim`). */
function splitSpec(spec: string): ModelSpec {
  const s = spec.trim();
  const end = s.search(/[:?[]/);
  const provider = end < 0 ? s : s.slice(0, end);
  const id = end >= 0 && s[end] === ':' ? s.slice(end + 1) : '';
  return { provider, id, spec: s };
}

/**
 * Settings written in `spec`'s query, read against the provider's schema; with
 * `otherQueryKeys: 'model-name'`, also the spec with the keys it took out (the rest of the query
 * stays with the model's id).
 */
export function specSettings(
  name: string,
  provider: AnyModelProvider,
  spec: ModelSpec,
): { settings: Record<string, unknown>; spec: ModelSpec } {
  const q = spec.spec.indexOf('?');
  if (q < 0) return { settings: {}, spec };
  const fields = new Map(settingFields(provider.settings).map((f) => [f.key, f]));
  const byQueryKey = new Map<string, SettingField>();
  for (const f of fields.values()) byQueryKey.set(queryKeyOf(f.key), f);
  for (const [alias, key] of Object.entries(provider.aliases ?? {})) {
    const f = fields.get(key);
    if (!f) throw new Error(`provider ${name}: alias ${alias} names no setting ${key}`);
    byQueryKey.set(alias, f);
  }
  const settings: Record<string, unknown> = {};
  const kept: string[] = [];
  // A provider's keys are read lowercased (its aliases are lowercase words), unlike a judge's.
  for (const { part, key, value: raw } of queryEntries(spec.spec.slice(q + 1), 'lowercase')) {
    const field = byQueryKey.get(key);
    const where = `model spec "${spec.spec}": ${key}`;
    if (!field) {
      if (provider.otherQueryKeys === 'model-name') {
        kept.push(part);
        continue;
      }
      throw new UsageError(
        `model spec "${spec.spec}": unknown option "${key}" of ${name} (known: ${[...byQueryKey.keys()].join(', ')})`,
      );
    }
    if (provider.notInSpec?.includes(field.key))
      throw new UsageError(
        `model spec "${spec.spec}": ${key} may not be written in a model spec (specs are recorded with the results): pass it as ${field.flag}`,
      );
    settings[field.key] = queryValue(field, raw, where); // strict: a bad value is a usage error here
  }
  checkSettings(
    provider.settings,
    settings,
    (k) => `model spec "${spec.spec}": ${queryKeyOf(k)}`,
    `model spec "${spec.spec}"`,
  );
  if (provider.otherQueryKeys !== 'model-name') return { settings, spec };
  // Only the keys taken out leave the spec: the model's name keeps the rest of its query.
  const head = spec.spec.slice(0, q);
  const s = kept.length > 0 ? `${head}?${kept.join('&')}` : head;
  return { settings, spec: splitSpec(s) };
}

/** The keys of `given` the provider's schema declares, checked against it (the rest are other backends'). */
function givenSettings(
  provider: AnyModelProvider,
  given: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const keys = new Set(settingFields(provider.settings).map((f) => f.key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(given)) if (keys.has(k) && v !== undefined) out[k] = v;
  return out;
}

/**
 * A provider registry over `providers` (keys are the spec names). Nothing is registered
 * anywhere else: two registries are two independent values.
 *
 * @example
 * const registry = createProviderRegistry({ openai: openaiProvider, sim: createSimProvider(PROMPT_READERS) });
 * const model = await registry.languageModel('openai:Qwen2.5-7B-Instruct', { settings: { baseUrl } });
 */
export function createProviderRegistry(
  providers: Readonly<Record<string, AnyModelProvider>>,
): ProviderRegistry {
  for (const name of Object.keys(providers))
    if (!/^[a-z][a-z0-9-]*$/.test(name))
      throw new Error(`provider name "${name}" must be lowercase letters, digits and dashes`);
  const table = new Map(Object.entries(providers));

  function parse(spec: string): ModelSpec {
    const parsed = splitSpec(spec);
    if (!table.has(parsed.provider)) {
      const usages = [...table.values()].map((p) => p.usage);
      const help =
        usages.length === 0 ? 'the provider registry is empty' : `expected ${usages.join(', or ')}`;
      throw new UsageError(`unknown model spec "${spec}": ${help}`);
    }
    return parsed;
  }

  function resolve(spec: string, given: Readonly<Record<string, unknown>> = {}) {
    const parsed = parse(spec);
    const provider = table.get(parsed.provider)!;
    const fromSpec = specSettings(parsed.provider, provider, parsed);
    const fromOptions = givenSettings(provider, given);
    checkSettings(provider.settings, fromOptions, (k) => k, `${parsed.provider} settings`);
    const settings = provider.settings.parse({ ...fromSpec.settings, ...fromOptions }) as Record<
      string,
      unknown
    >;
    return { provider, spec: fromSpec.spec, settings };
  }

  return {
    names: () => [...table.keys()].sort(),
    provider: (name) => table.get(name),
    parse,
    settingsOf: (spec, settings) => resolve(spec, settings).settings,
    worldOf(spec) {
      const parsed = parse(spec);
      return table.get(parsed.provider)!.world?.(parsed) ?? 'real';
    },
    async languageModel(spec, options = {}) {
      const { provider, spec: parsed, settings } = resolve(spec, options.settings);
      if (options.batch && !provider.batch)
        throw new UsageError(
          `batch files (--batch-out / --batch-in) carry requests for an OpenAI-compatible engine: use --policy openai:<model>, not "${spec}"`,
        );
      const model = await provider.create(parsed, settings, options);
      if (model.specificationVersion !== 'v1')
        throw new Error(
          `provider "${parsed.provider}" returned a model of specification ${String(model.specificationVersion)}; stepwise speaks v1`,
        );
      // Outermost first: the sink hears what the model (or nothing, on a cache hit) said.
      const layers: ModelMiddleware[] = [];
      if (options.onWarning) layers.push(warningsMiddleware(options.onWarning));
      const cache =
        provider.cached && !options.noCache
          ? cacheMiddleware(openStore(options.storePath), { mode: options.cacheMode })
          : undefined;
      if (cache) layers.push(cache);
      const world = provider.world?.(parsed);
      if (layers.length === 0 && (world === undefined || model.world === world)) return model;
      const wrapped = wrapModel(model, layers, world === undefined ? {} : { world });
      return cache ? withCacheStats(wrapped, cache) : wrapped;
    },
  };
}
