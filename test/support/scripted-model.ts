import type {
  Capabilities,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  Sample,
} from '../../src/models/types.js';

/**
 * What an in-process policy model offers: n samples per request and continuing an assistant
 * turn; no logprobs, echo, score or pooling.
 */
export const POLICY_CAPABILITIES: Capabilities = {
  n: true,
  logprobs: false,
  echo: false,
  continueAssistant: true,
  score: false,
  pooling: false,
};

/** A scripted in-process model: `reply` decides the samples of each request; requests are recorded. */
export function scriptedModel(
  reply: (request: GenerateRequest, callIndex: number) => Array<Partial<Sample> & { text: string }>,
  extra: Omit<Partial<LanguageModel>, 'capabilities'> & { capabilities?: Partial<Capabilities> } = {},
): LanguageModel & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  const { capabilities, ...rest } = extra;
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'scripted',
    capabilities: { ...POLICY_CAPABILITIES, logprobs: true, ...capabilities },
    requests,
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      requests.push(request);
      const samples = reply(request, requests.length - 1).map((s) => ({
        finishReason: 'stop' as const,
        completionTokens: 5,
        ...s,
      }));
      return {
        samples,
        usage: { calls: 1, promptTokens: 10, completionTokens: 5 * samples.length },
        warnings: [],
      };
    },
    ...rest,
  };
}
