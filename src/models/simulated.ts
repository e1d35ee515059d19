import { CostLedger } from '../core/cost.js';
import type { GenerateResult, LanguageModel, World } from '../core/model.js';
import type { ModelMiddleware } from './middleware.js';

/**
 * Whether a model is the simulated world, decided by what it is rather than how its spec is
 * spelled: its world is `sim` (the in-process `sim` backend), or its served name is a sim spec
 * (`stepwise sim serve` takes per-request options in the model field). A model behind the sim
 * server under any other name (`--policy openai:anything`) is known by its replies: the sim
 * server marks each one, and the OpenAI backend marks the samples it parses from them
 * ({@link wroteSimulated}, {@link provenanceMiddleware}); the server's `GET /v1/models` entries
 * say `simulated: true` too.
 */
export function isSimulatedModel(model: LanguageModel): boolean {
  return model.world === 'sim' || model.provider === 'sim' || isSimModelName(model.modelId);
}

/** Whether a spec or served model name is the simulated world's: `sim`, or `sim` then `:`, `?` or `[`. */
export function isSimModelName(spec: string): boolean {
  return /^sim(?:$|[:?[])/.test(spec);
}

/** Which world a model is, as far as it says before any reply (a marked reply may say `sim` later). */
export function worldOfModel(model: LanguageModel): World {
  return isSimulatedModel(model) ? 'sim' : (model.world ?? 'real');
}

/**
 * A job's cost ledger, knowing before any call the worlds of the models that do the job's work
 * (a reply marked by the sim server adds `sim` later, {@link worldOfReply}). Rows and summaries
 * read "simulated" from it, never from a flag of their own.
 */
export function ledgerOf(...models: readonly (LanguageModel | undefined)[]): CostLedger {
  const ledger = new CostLedger();
  for (const m of models) if (m) ledger.saw(worldOfModel(m));
  return ledger;
}

/** The world a generate result shows by itself: `sim` when the sim server marked it, else none. */
export function worldOfReply(result: Pick<GenerateResult, 'samples'>): World | undefined {
  return wroteSimulated(result) ? 'sim' : undefined;
}

/** Whether any sample of a generate result came from the simulated world. */
export function wroteSimulated(result: Pick<GenerateResult, 'samples'>): boolean {
  return result.samples.some((s) => s.simulated === true);
}

/**
 * Provenance as a middleware: `onSimulated` is called when a generate result came from the
 * simulated world (a marked sim-server reply, also when served from the cache).
 */
export function provenanceMiddleware(onSimulated: () => void): ModelMiddleware {
  return {
    name: 'provenance',
    async generate({ request, options }, next) {
      const result = await next(request, options);
      if (wroteSimulated(result)) onSimulated();
      return result;
    },
  };
}
