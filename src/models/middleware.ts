import type {
  CallOptions,
  GenerateRequest,
  GenerateResult,
  LanguageModel,
  ScoreResult,
  Usage,
  World,
} from '../core/model.js';

/**
 * Model middleware (in the spirit of the Vercel AI SDK's language-model middleware): something
 * that sits around every call of a model — the call cache, the warning sink, the provenance
 * watch — written once as plain functions instead of a proxy or a hand-made wrapper per concern.
 * Each hook receives the call and a `next` that runs the rest of the chain (and finally the
 * model); a middleware that leaves a hook out passes that call straight through.
 */
export interface ModelMiddleware {
  /** What the middleware is, for debugging (`cache`, `warnings`, `provenance`). */
  readonly name: string;
  generate?(
    call: { request: GenerateRequest; options: CallOptions; model: LanguageModel },
    next: (request: GenerateRequest, options: CallOptions) => Promise<GenerateResult>,
  ): Promise<GenerateResult>;
  score?(
    call: { prefix: string; continuation: string; options: CallOptions; model: LanguageModel },
    next: (prefix: string, continuation: string, options: CallOptions) => Promise<ScoreResult>,
  ): Promise<ScoreResult>;
  pool?(
    call: { input: string; options: CallOptions; model: LanguageModel },
    next: (input: string, options: CallOptions) => Promise<{ data: number[][]; usage: Usage }>,
  ): Promise<{ data: number[][]; usage: Usage }>;
}

/** A model seen through middleware: the model it wraps and the middleware, outermost first. */
export interface WrappedModel extends LanguageModel {
  /** The backend's own model, under all the middleware. */
  readonly inner: LanguageModel;
  readonly middleware: readonly ModelMiddleware[];
}

/** The backend's own model under any middleware. */
export function innerModel(model: LanguageModel): LanguageModel {
  return (model as Partial<WrappedModel>).inner ?? model;
}

/** The middleware around `model` (outermost first; none for a bare backend). */
export function middlewareOf(model: LanguageModel): readonly ModelMiddleware[] {
  return (model as Partial<WrappedModel>).middleware ?? [];
}

/**
 * `model` with `middleware` around it: the first is outermost (it sees a call first and its
 * result last), the last sits right around the model. Wrapping a wrapped model adds the new
 * middleware outside the old, over the same inner model. Identity (`provider`, `modelId`,
 * `origin`, `capabilities`) and `fingerprint`/`close` are the model's own; `world` is the
 * model's unless `identity` says (the registry knows the world of a spec: a gguf file of the tiny
 * networks is `tiny`).
 */
export function wrapModel(
  model: LanguageModel,
  middleware: ModelMiddleware | readonly ModelMiddleware[],
  identity: { world?: World } = {},
): WrappedModel {
  const added = Array.isArray(middleware)
    ? (middleware as readonly ModelMiddleware[])
    : [middleware as ModelMiddleware];
  const inner = innerModel(model);
  const chain = [...added, ...middlewareOf(model)];

  const wrapped: WrappedModel = {
    specificationVersion: 'v1',
    provider: inner.provider,
    modelId: inner.modelId,
    origin: inner.origin,
    capabilities: inner.capabilities,
    inner,
    ...withWorld(identity.world ?? model.world ?? inner.world),
    middleware: chain,
    generate(request, options = {}) {
      const run = (i: number, r: GenerateRequest, o: CallOptions): Promise<GenerateResult> => {
        const m = chain.slice(i).findIndex((x) => x.generate);
        if (m < 0) return inner.generate(r, o);
        const at = i + m;
        return chain[at]!.generate!({ request: r, options: o, model: inner }, (r2, o2) =>
          run(at + 1, r2, o2),
        );
      };
      return run(0, request, options);
    },
  };
  if (inner.fingerprint) wrapped.fingerprint = (options) => inner.fingerprint!(options);
  if (inner.score)
    wrapped.score = (prefix, continuation, options = {}) => {
      const run = (i: number, p: string, c: string, o: CallOptions): Promise<ScoreResult> => {
        const m = chain.slice(i).findIndex((x) => x.score);
        if (m < 0) return inner.score!(p, c, o);
        const at = i + m;
        return chain[at]!.score!({ prefix: p, continuation: c, options: o, model: inner }, (p2, c2, o2) =>
          run(at + 1, p2, c2, o2),
        );
      };
      return run(0, prefix, continuation, options);
    };
  if (inner.pool)
    wrapped.pool = (input, options = {}) => {
      const run = (i: number, x: string, o: CallOptions): Promise<{ data: number[][]; usage: Usage }> => {
        const m = chain.slice(i).findIndex((y) => y.pool);
        if (m < 0) return inner.pool!(x, o);
        const at = i + m;
        return chain[at]!.pool!({ input: x, options: o, model: inner }, (x2, o2) => run(at + 1, x2, o2));
      };
      return run(0, input, options);
    };
  if (inner.close) wrapped.close = () => inner.close!();
  return wrapped;
}

function withWorld(world: World | undefined): { world?: World } {
  return world === undefined ? {} : { world };
}
