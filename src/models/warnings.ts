import type { ModelWarning } from '../core/model.js';
import type { ModelMiddleware } from './middleware.js';

/**
 * Where a model's warnings go: the one route by which a backend's "I served this differently
 * than asked" reaches the user. A backend puts its warnings in each result (`GenerateResult.warnings`);
 * the registry's {@link warningsMiddleware} hands each distinct one to the sink once per model.
 * The CLI's sink prints `stepwise: warning: <details>` (src/cli/warn.ts).
 */
export type WarningSink = (message: string, warning?: ModelWarning) => void;

/** Each distinct warning of a model's results, once, to `sink` (a cached reply says nothing new). */
export function warningsMiddleware(sink: WarningSink): ModelMiddleware {
  const said = new Set<string>();
  return {
    name: 'warnings',
    async generate({ request, options }, next) {
      const result = await next(request, options);
      for (const w of result.warnings) {
        if (said.has(w.details)) continue;
        said.add(w.details);
        sink(w.details, w);
      }
      return result;
    },
  };
}
