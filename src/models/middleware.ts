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
  // Each hook's chain is composed once here, not searched on every call (a per-model-call path).
  const generate = compose(
    chain
      .filter((m) => m.generate)
      .map(
        (m): Link<[GenerateRequest, CallOptions], GenerateResult> =>
          (next, request, options) =>
            m.generate!({ request, options, model: inner }, next),
      ),
    (r, o) => inner.generate(r, o),
  );

  const wrapped: WrappedModel = {
    specificationVersion: 'v1',
    provider: inner.provider,
    modelId: inner.modelId,
    origin: inner.origin,
    capabilities: inner.capabilities,
    inner,
    ...withWorld(identity.world ?? model.world ?? inner.world),
    middleware: chain,
    generate: (request, options = {}) => generate(request, options),
  };
  if (inner.fingerprint) wrapped.fingerprint = (options) => inner.fingerprint!(options);
  if (inner.score) {
    const score = compose(
      chain
        .filter((m) => m.score)
        .map(
          (m): Link<[string, string, CallOptions], ScoreResult> =>
            (next, prefix, continuation, options) =>
              m.score!({ prefix, continuation, options, model: inner }, next),
        ),
      (p, c, o) => inner.score!(p, c, o),
    );
    wrapped.score = (prefix, continuation, options = {}) => score(prefix, continuation, options);
  }
  if (inner.pool) {
    const pool = compose(
      chain
        .filter((m) => m.pool)
        .map(
          (m): Link<[string, CallOptions], { data: number[][]; usage: Usage }> =>
            (next, input, options) =>
              m.pool!({ input, options, model: inner }, next),
        ),
      (x, o) => inner.pool!(x, o),
    );
    wrapped.pool = (input, options = {}) => pool(input, options);
  }
  if (inner.close) wrapped.close = () => inner.close!();
  return wrapped;
}

/** One middleware's hook, as a link of a chain: the call's arguments and the rest of the chain. */
type Link<A extends unknown[], R> = (next: (...args: A) => Promise<R>, ...args: A) => Promise<R>;

/** `links` around `last`, the first outermost: each link's `next` runs the links after it, then `last`. */
function compose<A extends unknown[], R>(
  links: readonly Link<A, R>[],
  last: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return links.reduceRight<(...args: A) => Promise<R>>(
    (next, link) =>
      (...args) =>
        link(next, ...args),
    last,
  );
}

function withWorld(world: World | undefined): { world?: World } {
  return world === undefined ? {} : { world };
}
