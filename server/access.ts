/**
 * Who may open a connection: a bearer token on every connection, and for
 * browsers an `Origin` that is the server's own (or one allowed by flag), so
 * a page on another site cannot drive a local agent even if it learns the port.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface AccessPolicy {
  token: string;
  /** Exact `Origin` values a browser may connect from. */
  origins: ReadonlySet<string>;
}

export type AccessVerdict = { ok: true } | { ok: false; status: 401 | 403; reason: string };

/** A fresh token: 32 random bytes, URL-safe. */
export const newToken = (): string => randomBytes(32).toString('base64url');

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '::ffff:127.0.0.1']);
export const isLoopbackHost = (host: string): boolean => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);

const hostPart = (host: string) => (host.includes(':') ? `[${host}]` : host);

/**
 * The origins a page served by this server has. A loopback server answers to
 * every loopback name; a wildcard bind (0.0.0.0, ::) has no single own origin,
 * so its pages need `--allow-origin`.
 */
export function ownOrigins(host: string, port: number): string[] {
  if (isLoopbackHost(host)) return [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
  if (host === '0.0.0.0' || host === '::') return [];
  return [`http://${hostPart(host)}:${port}`];
}

/** The token a connection offers: `Authorization: Bearer <token>`, else `?token=`. */
export function offeredToken(headers: IncomingHttpHeaders, url: string | undefined): string | undefined {
  const auth = headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  try {
    return new URL(url ?? '/', 'http://x').searchParams.get('token') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Constant-time: compares digests, so neither length nor prefix leaks. */
function sameToken(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

/** Contract: pure; decides an upgrade from its headers and URL alone. */
export function checkAccess(headers: IncomingHttpHeaders, url: string | undefined, policy: AccessPolicy): AccessVerdict {
  const offered = offeredToken(headers, url);
  if (offered === undefined || !sameToken(offered, policy.token)) return { ok: false, status: 401, reason: 'missing or wrong token' };
  const origin = headers.origin;
  // No Origin: not a browser (or a browser that would not send one); the token alone decides.
  if (origin !== undefined && !policy.origins.has(origin)) return { ok: false, status: 403, reason: `origin not allowed: ${origin}` };
  return { ok: true };
}
