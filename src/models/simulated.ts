import type { GenerateResult, LanguageModel } from '../core/model.js';

/**
 * Whether a model is the simulated world, decided by what it is rather than how its spec is
 * spelled: the in-process `sim` backend, or a model whose served name is a sim spec. A model
 * behind `stepwise sim serve` under any other name (`--policy openai:anything`) is known by its
 * replies: the sim server marks each one, and the OpenAI backend marks the samples it parses from
 * them ({@link wroteSimulated}); the server's `GET /v1/models` entries say `simulated: true` too.
 */
export function isSimulatedModel(model: LanguageModel): boolean {
  return model.provider === 'sim' || /^sim(?:$|[:?[])/.test(model.modelId);
}

/** Whether any sample of a generate result came from the simulated world. */
export function wroteSimulated(result: Pick<GenerateResult, 'samples'>): boolean {
  return result.samples.some((s) => s.simulated === true);
}
