import { randomInt } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { StepwiseError } from '../core/errors.js';
import type {
  CallOptions,
  Capabilities,
  ChatMessage,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  ModelWarning,
  Sample,
  ScoreResult,
  TokenLogprob,
} from '../core/model.js';
import { deriveSeed } from './seeds.js';

/** Settings of a local GGUF model. */
export interface GgufModelOptions {
  /** A file path, or an `hf:user/repo:quant` / URL that node-llama-cpp resolves (needs internet). */
  model: string;
  /**
   * CPU threads for evaluation (default: `os.availableParallelism()`, 1 for models under 64 MB).
   * Always set: node-llama-cpp's own default oversubscribes small machines badly.
   */
  threads?: number;
  /** Context window in tokens (default: the model's training context, at most 4,096). */
  contextSize?: number;
  /** Where `hf:` models are downloaded to (default: node-llama-cpp's models folder). */
  modelsDir?: string;
}

const INSTALL_HINT =
  'gguf: models need the optional dependency node-llama-cpp: install it with `npm i node-llama-cpp@3.21.1`';

// The module's types are only needed here; it is loaded lazily so library users without it can
// use every other backend.
type LlamaModule = typeof import('node-llama-cpp');

async function loadLlamaModule(): Promise<LlamaModule> {
  try {
    return (await import('node-llama-cpp')) as LlamaModule;
  } catch (err) {
    throw new StepwiseError(`${INSTALL_HINT} (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
}

function mapStop(reason: string): FinishReason {
  if (reason === 'maxTokens') return 'length';
  if (reason === 'abort') return 'error';
  return 'stop';
}

/** Below this file size a model's per-token work is too small to share across threads. */
const TINY_MODEL_BYTES = 64 * 1024 * 1024;

/**
 * Default CPU threads: the machine's cores, except for tiny models (< 64 MB) where thread
 * synchronisation costs more than it saves — measured here on 2 cores with the 1.2 MB
 * stories260K model: 2 threads took 16 s for what 1 thread did in 1.6 s.
 */
export function defaultThreads(modelPath: string): number {
  try {
    if (statSync(modelPath).size < TINY_MODEL_BYTES) return 1;
  } catch {
    // Unknown size: use all cores.
  }
  return availableParallelism();
}

/** Chat messages as plain text (the GGUF backend continues raw text; see docs/models.md). */
export function flattenMessages(messages: ChatMessage[]): string {
  const last = messages[messages.length - 1];
  const parts = messages.map((m, i) =>
    i === messages.length - 1 && m.role === 'assistant'
      ? `assistant: ${m.content}`
      : `${m.role}: ${m.content}\n\n`,
  );
  return last?.role === 'assistant' ? parts.join('') : `${parts.join('')}assistant: `;
}

/**
 * A local GGUF model on node-llama-cpp (CPU). Calls run one at a time on one context sequence;
 * n samples are n generations with seeds derived from the request seed.
 */
export class GgufModel implements LanguageModel {
  readonly specificationVersion = 'v1' as const;
  readonly provider = 'gguf';
  readonly modelId: string;
  readonly capabilities: Capabilities = {
    n: false,
    logprobs: false,
    echo: false,
    continueAssistant: false,
    score: true,
    pooling: false,
  };
  private queue: Promise<unknown> = Promise.resolve();
  private warnedSequential = false;

  private constructor(
    modelId: string,
    private readonly llama: import('node-llama-cpp').Llama,
    private readonly model: import('node-llama-cpp').LlamaModel,
    private readonly context: import('node-llama-cpp').LlamaContext,
    private readonly sequence: import('node-llama-cpp').LlamaContextSequence,
    private readonly completion: import('node-llama-cpp').LlamaCompletion,
  ) {
    this.modelId = modelId;
  }

  /** Load a GGUF model (a path, or an `hf:` URI that node-llama-cpp downloads). */
  static async load(options: GgufModelOptions): Promise<GgufModel> {
    const lib = await loadLlamaModule();
    let modelPath: string;
    if (/^(hf:|https?:)/.test(options.model)) {
      try {
        modelPath = await lib.resolveModelFile(options.model, { directory: options.modelsDir, cli: false });
      } catch (err) {
        throw new StepwiseError(
          `gguf: could not resolve ${options.model} (downloading needs internet access): ${(err as Error).message}`,
          { cause: err },
        );
      }
    } else {
      modelPath = resolve(options.model);
      if (!existsSync(modelPath))
        throw new StepwiseError(`gguf: model file not found: ${modelPath}`, { exitCode: 2 });
    }
    const threads = Math.max(1, options.threads ?? defaultThreads(modelPath));
    const llama = await lib.getLlama({ logLevel: lib.LlamaLogLevel.error, gpu: false });
    let model: import('node-llama-cpp').LlamaModel;
    try {
      model = await llama.loadModel({ modelPath });
    } catch (err) {
      throw new StepwiseError(`gguf: cannot load ${modelPath}: ${(err as Error).message}`, { cause: err });
    }
    const contextSize = options.contextSize ?? Math.min(model.trainContextSize, 4096);
    const context = await model.createContext({ threads, sequences: 1, contextSize });
    const sequence = context.getSequence();
    const completion = new lib.LlamaCompletion({ contextSequence: sequence });
    return new GgufModel(options.model, llama, model, context, sequence, completion);
  }

  /** Run calls one at a time: one context sequence serves them all. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
    if ((request.prompt === undefined) === (request.messages === undefined))
      throw new StepwiseError('a generate request needs exactly one of `prompt` or `messages`');
    const warnings: ModelWarning[] = [];
    const unsupported = (feature: string, details: string): void => {
      warnings.push({ type: 'unsupported-setting', feature, details });
    };
    const input = request.prompt ?? flattenMessages(request.messages!);
    if (request.messages)
      unsupported('messages', 'gguf: chat messages are sent as plain "role: content" text');
    if (request.logprobs !== undefined)
      unsupported('logprobs', 'gguf: logprobs are not returned by this backend');
    if (request.extra && Object.keys(request.extra).length > 0)
      unsupported('extra', `gguf: ignored extra settings ${Object.keys(request.extra).join(', ')}`);
    const n = Math.max(1, request.n ?? 1);
    if (n > 1 && !this.warnedSequential) {
      // Said once per model: it is a property of the backend, not of each request.
      unsupported('n', 'gguf: n > 1 samples are generated one after another (no shared prefill)');
      this.warnedSequential = true;
    }
    // Without a seed, node-llama-cpp seeds from the clock in seconds: samples drawn in the same
    // second would be identical. Draw one base seed per request instead.
    const baseSeed = request.seed ?? randomInt(2 ** 31);
    return this.exclusive(async () => {
      const promptTokens = this.model.tokenize(input).length;
      const samples: Sample[] = [];
      for (let i = 0; i < n; i++) {
        let tokens = 0;
        const reply = await this.completion.generateCompletionWithMeta(input, {
          maxTokens: request.maxTokens ?? 256,
          temperature: request.temperature ?? 1,
          topP: request.topP,
          seed: deriveSeed(baseSeed, i),
          customStopTriggers: request.stop?.length ? request.stop : undefined,
          signal: options.signal,
          onToken: (t) => {
            tokens += t.length;
          },
        });
        const meta = reply.metadata;
        const sample: Sample = {
          text: reply.response,
          finishReason: mapStop(meta.stopReason),
          completionTokens: tokens,
        };
        if (meta.stopReason === 'customStopTrigger')
          sample.stopReason = meta.customStopTrigger.filter((x) => typeof x === 'string').join('');
        else if (meta.stopReason === 'eogToken') sample.stopReason = null;
        samples.push(sample);
      }
      return {
        samples,
        usage: {
          calls: n,
          promptTokens: promptTokens * n,
          completionTokens: samples.reduce((a, s) => a + s.completionTokens, 0),
        },
        warnings,
      };
    });
  }

  /**
   * Log-probability of `continuation` after `prefix`: the text is tokenized as one string and
   * tokens past the longest common prefix with the prefix's own tokenization are scored, each
   * from the full softmax at its position.
   */
  async score(prefix: string, continuation: string): Promise<ScoreResult> {
    return this.exclusive(async () => {
      const bos = this.model.tokens.bos;
      const head = bos === null ? [] : [bos];
      const full = [...head, ...this.model.tokenize(prefix + continuation)];
      const pre = [...head, ...this.model.tokenize(prefix)];
      let k = 0;
      while (k < pre.length && k < full.length && pre[k] === full[k]) k++;
      // The first scored token needs at least one token before it.
      k = Math.max(1, k);
      await this.sequence.clearHistory();
      const out = await this.sequence.controlledEvaluate(
        full.map((t, i) =>
          i >= k - 1 && i < full.length - 1
            ? ([t, { generateNext: { probabilities: true, options: { temperature: 0 } } }] as const)
            : t,
        ) as Parameters<import('node-llama-cpp').LlamaContextSequence['controlledEvaluate']>[0],
      );
      const tokens: TokenLogprob[] = [];
      for (let i = k; i < full.length; i++) {
        const p = out[i - 1]?.next?.probabilities?.get(full[i]) ?? 0;
        tokens.push({ token: this.model.detokenize([full[i]]), logprob: p > 0 ? Math.log(p) : -Infinity });
      }
      await this.sequence.clearHistory();
      return {
        logprob: tokens.reduce((a, t) => a + t.logprob, 0),
        tokens,
        usage: { calls: 1, promptTokens: full.length, completionTokens: 0 },
      };
    });
  }

  async close(): Promise<void> {
    await this.exclusive(async () => {
      this.completion.dispose();
      await this.context.dispose();
      await this.model.dispose();
      await this.llama.dispose();
    });
  }
}

/** Load a local GGUF model as a `LanguageModel`. */
export function createGgufModel(options: GgufModelOptions): Promise<GgufModel> {
  return GgufModel.load(options);
}
