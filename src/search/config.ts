/**
 * The search config: every setting of every strategy, in one object (search-and-learn style). The
 * settings are declared as schemas — the shared ones in ./settings.ts, each strategy's in its own
 * file — and joined by the registry (./registry.ts), where the config, its defaults and its checks
 * are derived; they are re-exported here under the names the library has always had.
 */
export {
  DEFAULT_SEARCH_CONFIG,
  resolveSearchConfig,
  SEARCH_SETTINGS,
  type SearchConfig,
} from './registry.js';
export {
  AGGREGATIONS,
  SHARED_SEARCH_SETTINGS,
  type SharedSearchConfig,
  type StrategyConfig,
} from './settings.js';
