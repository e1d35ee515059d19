/**
 * Which server family is behind an OpenAI-compatible URL. The families differ where stepwise
 * cares most — how a final assistant message is continued — and `GET /v1/models` says who they are:
 * vLLM and SGLang set `owned_by` to their name, llama.cpp to `llamacpp`, Ollama to the model's
 * namespace (`library` for the official models). Replies carry a second hint: llama.cpp adds
 * `timings`, Ollama sets `system_fingerprint: "fp_ollama"`.
 */
export type ServerKind = 'vllm' | 'sglang' | 'llama.cpp' | 'ollama' | 'unknown';

export const SERVER_KINDS: readonly ServerKind[] = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'unknown'];

/** One `/v1/models` entry, as far as stepwise reads it. */
export interface ServedModel {
  id: string;
  ownedBy?: string;
  /** llama.cpp: the model's training context (`meta.n_ctx_train`); vLLM: `max_model_len`. */
  maxModelLen?: number;
}

/** What `GET /v1/models` said about a server. */
export interface ServerInfo {
  kind: ServerKind;
  models: ServedModel[];
  /** The server is `stepwise sim serve` (an entry with `simulated: true` or owner `stepwise-sim…`). */
  simulated: boolean;
}

/** The family named by a `/v1/models` reply (any JSON value; unknown shapes → `unknown`). */
export function serverInfoFromModels(reply: unknown): ServerInfo {
  const data = (reply as { data?: unknown })?.data;
  const models: ServedModel[] = [];
  let simulated = false;
  if (Array.isArray(data)) {
    for (const m of data) {
      if (typeof m !== 'object' || m === null || typeof (m as { id?: unknown }).id !== 'string') continue;
      const entry = m as { simulated?: unknown; owned_by?: unknown };
      if (
        entry.simulated === true ||
        (typeof entry.owned_by === 'string' && entry.owned_by.startsWith('stepwise-sim'))
      )
        simulated = true;
      const r = m as {
        id: string;
        owned_by?: unknown;
        max_model_len?: unknown;
        meta?: { n_ctx_train?: unknown };
      };
      const model: ServedModel = { id: r.id };
      if (typeof r.owned_by === 'string') model.ownedBy = r.owned_by;
      const len = typeof r.max_model_len === 'number' ? r.max_model_len : r.meta?.n_ctx_train;
      if (typeof len === 'number') model.maxModelLen = len;
      models.push(model);
    }
  }
  const owners = new Set(models.map((m) => m.ownedBy?.toLowerCase()));
  let kind: ServerKind = 'unknown';
  if (owners.has('vllm')) kind = 'vllm';
  else if (owners.has('sglang')) kind = 'sglang';
  else if (owners.has('llamacpp')) kind = 'llama.cpp';
  // Ollama's owner is the model's namespace; its native list (`models`) sits beside `data` in
  // llama.cpp's reply too, so only the namespace tells them apart.
  else if (owners.has('library')) kind = 'ollama';
  return { kind, models, simulated };
}

/**
 * Servers that stamp `created` of a `/v1/models` entry with the time of the request, not of the
 * model: vLLM and SGLang (`ModelCard.created` defaults to `int(time.time())`), llama.cpp
 * (`std::time(0)` in its models handler). Their `created` says nothing about the model.
 */
const CREATED_IS_NOW = new Set(['vllm', 'sglang', 'llamacpp']);

/**
 * What a `/v1/models` reply says about the model named `modelId`: the stable fields of its entry
 * (id, owner, root/parent checkpoint, context length, llama.cpp's `meta` with parameter count and
 * size, `created` where it dates the model), or of the only entry when the server lists one model
 * under another name (llama.cpp serves its one model under any name). Null when the reply names
 * no such model. Equal models give equal fingerprints across requests.
 */
export function modelFingerprint(reply: unknown, modelId: string): Record<string, unknown> | null {
  const data = (reply as { data?: unknown })?.data;
  if (!Array.isArray(data)) return null;
  const entries = data.filter(
    (m): m is Record<string, unknown> =>
      typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'string',
  );
  const entry = entries.find((m) => m.id === modelId) ?? (entries.length === 1 ? entries[0] : undefined);
  if (!entry) return null;
  const owner = typeof entry.owned_by === 'string' ? entry.owned_by.toLowerCase() : '';
  const out: Record<string, unknown> = {};
  for (const key of ['id', 'owned_by', 'root', 'parent', 'max_model_len', 'meta', 'created']) {
    if (key === 'created' && CREATED_IS_NOW.has(owner)) continue;
    if (entry[key] !== undefined && entry[key] !== null) out[key] = entry[key];
  }
  return out;
}

/** The family a completion reply gives away, when it does. */
export function serverKindFromReply(reply: unknown): ServerKind {
  if (typeof reply !== 'object' || reply === null) return 'unknown';
  const r = reply as { timings?: unknown; system_fingerprint?: unknown };
  if (r.system_fingerprint === 'fp_ollama') return 'ollama';
  if (typeof r.timings === 'object' && r.timings !== null) return 'llama.cpp';
  return 'unknown';
}

/** Parse a configured kind (`--server-kind`, `STEPWISE_SERVER_KIND`); `auto` means detect. */
export function parseServerKind(value: string): ServerKind | 'auto' {
  const v = value
    .trim()
    .toLowerCase()
    .replace(/^llamacpp$|^llama-cpp$/, 'llama.cpp');
  if (v === 'auto' || (SERVER_KINDS as readonly string[]).includes(v)) return v as ServerKind | 'auto';
  throw new Error(`unknown server kind "${value}": expected auto, ${SERVER_KINDS.join(', ')}`);
}
