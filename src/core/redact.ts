/**
 * No secret is written anywhere (run records, settings, output rows, logs, the web API). A
 * secret reaches stepwise as an option whose name says so (`--api-key`, a token, a password) or
 * as credentials inside a URL (`http://user:pass@host/v1`, `?api_key=…`). Everything a job
 * records passes through {@link redactSecrets}; the URL part is {@link redactUrl}, which also
 * serves messages and logs that name a server.
 */

export const REDACTED = '[redacted]';

/** Option and field names whose values are secrets, whatever their spelling (apiKey, api_key, X-Api-Key). */
const SECRET_NAME =
  /^(?:.*[-_]?)?(?:api[-_]?key|apikey|token|secret|password|passwd|authorization|auth[-_]?token|access[-_]?key|credentials?)$/i;

/** Query parameters that carry a secret. */
const SECRET_PARAM = /^(?:api[-_]?key|key|token|access[-_]?token|auth|secret|password|sig|signature)$/i;

/** Whether a field or option named `name` holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** `scheme://user:pass@host` and `scheme://token@host` inside any text. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:?#]*)(?::([^\s/@?#]*))?@/gi;
/** `?key=…` / `&api_key=…` inside any text. */
const URL_PARAM = /([?&])([A-Za-z_-]+)=([^&#\s"']*)/g;

/**
 * `text` with the credentials of every URL in it replaced: `http://user:pass@host` becomes
 * `http://[redacted]@host`, and secret query parameters (`?api_key=…`) `?api_key=[redacted]`.
 * Works on a bare URL, a comma-separated list, or a message that names one.
 */
export function redactUrl(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  let out = text.replace(URL_CREDENTIALS, (_m, scheme: string) => `${scheme}${REDACTED}@`);
  if (out.includes('?') || out.includes('&'))
    out = out.replace(URL_PARAM, (m, sep: string, name: string, value: string) =>
      SECRET_PARAM.test(name) && value !== '' && value !== REDACTED ? `${sep}${name}=${REDACTED}` : m,
    );
  return out;
}

/**
 * A copy of `value` with every secret replaced by {@link REDACTED}: the values of secret-named
 * fields (at any depth), and URL credentials in every string. Values without secrets come back
 * equal (same JSON), so redacting settings that hold none leaves their hash as it was.
 */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, 0) as T;
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactUrl(value);
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] =
      isSecretName(k) && v !== undefined && v !== null && v !== '' && v !== false
        ? REDACTED
        : redactValue(v, depth + 1);
  return out;
}

/**
 * The secret values a command line and environment carry: the value of every secret-named
 * option (`--api-key K`, `--api-key=K`, `--judge-api-key K`) and of OPENAI_API_KEY, so a message
 * that quotes one (a server echoing the key back in an error) can have it replaced too.
 * Values shorter than 4 characters are left alone: they cannot be told from ordinary text.
 */
export function secretValues(argv: readonly string[], env: NodeJS.ProcessEnv = {}): string[] {
  const out = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([A-Za-z][\w-]*)(?:=(.*))?$/.exec(argv[i]);
    if (!m || !isSecretName(m[1])) continue;
    const v = m[2] ?? argv[i + 1];
    if (v !== undefined && v.length >= 4) out.add(v);
  }
  for (const name of ['OPENAI_API_KEY'])
    if ((env[name]?.length ?? 0) >= 4 && env[name] !== 'EMPTY') out.add(env[name] as string);
  return [...out];
}

/** `text` with each of `literals` replaced by {@link REDACTED}, and URL credentials redacted. */
export function redactText(text: string, literals: readonly string[]): string {
  let out = text;
  for (const s of literals) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return redactUrl(out);
}
