/**
 * What bridle shows of a secret: `***`. One helper for every dump and every
 * line bridle prints (issue 20, item 11): `config --dump` (YAML and JSON),
 * store locations, `serve`'s start lines and its workers' problems, the
 * CLI's error lines, an MCP server's start failure. Rows hold secrets as
 * data: an MCP row's `env` (what a server gets is usually a token), HTTP
 * headers (`Authorization`, `Cookie`, `X-Api-Key`, …), any key that looks
 * like a key, token, secret or password, and URLs with a password or a
 * token in their query. The shape stays (key names, URL hosts, users), so a
 * dump still says what is configured where. ADR 0039.
 */

export const REDACTED = '***';

/** A key whose value is a secret: a header, a config key, a query parameter. */
const SECRET_KEY = /authorization|cookie|token$|^token|[-_]token|secret|passw(or)?d|passphrase|credential|api[-_]?key|access[-_]?key|private[-_]?key|(^|[-_])(key|auth|pwd|sig|signature)$|^x-auth/i;

/** A URL's user-info password, wherever it stands in a text: `scheme://user:pass@`. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:)[^\s/@]+@/gi;
/** A credential after an HTTP auth scheme, as an echoed header shows it. */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{4,}/g;
/** A query parameter of a secret-looking name, in a text. */
const QUERY_SECRET = /([?&#](?:[^=&#\s]*?(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|sig|signature|auth)[^=&#\s]*)=)[^&#\s]+/gi;

/** Contract: pure; whether a value under this key must not be shown. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Contract: pure, never throws; `url` with its password and secret-looking query values as `***`, or the text redacted when it does not parse. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactText(url);
  }
  const secretParams = [...u.searchParams.keys()].filter(isSecretKey);
  // A URL with nothing to hide is shown as it was written, not as `URL` normalizes it.
  if (!u.password && secretParams.length === 0) return url;
  if (u.password) u.password = REDACTED;
  for (const k of secretParams) u.searchParams.set(k, REDACTED);
  // URL turns `***` into `%2A%2A%2A` in a query: shown as written.
  return u.toString().replaceAll('%2A%2A%2A', REDACTED);
}

/** Contract: pure, never throws; a line of text with URL passwords, auth-scheme credentials and secret query values as `***`. */
export function redactText(text: string): string {
  return text.replace(URL_PASSWORD, `$1${REDACTED}@`).replace(AUTH_SCHEME, `$1 ${REDACTED}`).replace(QUERY_SECRET, `$1${REDACTED}`);
}

const redactAll = (v: unknown): unknown =>
  typeof v === 'string' ? REDACTED : Array.isArray(v) ? v.map(redactAll) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).map((k) => [k, redactAll((v as Record<string, unknown>)[k])])) : v;

/**
 * Contract: pure, never throws, leaves `value` as it was; a copy of a config
 * value for people to read: every value under `env` and under a secret-looking
 * key (`headers.Authorization`, `apiKey`, `password`, …) is `***`, and in every
 * other string URL passwords and credentials are.
 */
export function redactConfig(value: unknown): unknown {
  if (typeof value === 'string') return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? redactUrl(value) : redactText(value);
  if (Array.isArray(value)) return value.map(redactConfig);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === 'env' || isSecretKey(k) ? redactAll(v) : redactConfig(v);
  return out;
}
