import type {
  Capabilities,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  Sample,
} from '../../src/core/model.js';

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

/** Settings of {@link scriptedModel} besides its replies. */
export type ScriptedModelOptions = Omit<Partial<LanguageModel>, 'capabilities'> & {
  capabilities?: Partial<Capabilities>;
  /** Prompt tokens a request counts in its usage (default 10). */
  promptTokens?: (request: GenerateRequest) => number;
};

/**
 * The one recording mock model of the test suite: `reply` decides the samples of each request
 * (finish reason `stop` and 5 completion tokens unless it says otherwise); every request is
 * recorded in `requests`; usage is one call, the prompt tokens of `promptTokens` and the
 * samples' completion tokens. The scripted worlds of other tests (test/label/fake-model.ts,
 * test/search/fakes.ts) are reply functions over it.
 */
export function scriptedModel(
  reply: (request: GenerateRequest, callIndex: number) => Array<Partial<Sample> & { text: string }>,
  extra: ScriptedModelOptions = {},
): LanguageModel & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  const { capabilities, promptTokens, ...rest } = extra;
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
        usage: {
          calls: 1,
          promptTokens: promptTokens?.(request) ?? 10,
          completionTokens: samples.reduce((a, s) => a + s.completionTokens, 0),
        },
        warnings: [],
      };
    },
    ...rest,
  };
}
