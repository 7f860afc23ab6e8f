/**
 * The environment a command the model wrote runs with: the host's, less
 * every variable that holds a secret or a way to one — bridle's own (the
 * model's key, the server's token) and the user's: tokens, passwords, keys,
 * cookies, credentials, every cloud provider's variables, agent sockets that
 * sign for the user. With the network allowed a command could send them
 * anywhere, and even without, show them to the model. A subprocess
 * provider's `resolve` applies it to every spec.
 */
const SECRET_NAME = /TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|COOKIE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEYS?$|^KEYS?$|_PWD$|_AUTH_|_AUTH$/i;
const CLOUD_PREFIX = /^(AWS|AZURE|ARM|GOOGLE|GCP|GCLOUD|CLOUDSDK|DIGITALOCEAN|HCLOUD|OCI|ALIBABA_CLOUD|IBMCLOUD|SCW)_/i;
const SECRET_EXACT = new Set(['SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'KRB5CCNAME', 'BRIDLE_TOKEN']);
/** Where a collector's credentials ride (`OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=…`, and per signal). */
const OTLP_HEADERS = /^OTEL_EXPORTER_OTLP_(\w+_)?HEADERS$/i;
/** A URL with a password in it (`postgres://user:pass@host`). */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** Contract: pure; whether a command must not see this variable. */
export function isSecretVariable(name: string, value: string): boolean {
  return SECRET_EXACT.has(name.toUpperCase()) || SECRET_NAME.test(name) || OTLP_HEADERS.test(name) || CLOUD_PREFIX.test(name) || URL_WITH_PASSWORD.test(value);
}

/** Contract: pure; `env` less anything that looks like a secret. */
export function commandEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !isSecretVariable(k, v)) out[k] = v;
  return out;
}
