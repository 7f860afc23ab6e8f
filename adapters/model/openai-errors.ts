/**
 * Errors from the OpenAI SDK (and the fetch under it) → I8's normalized
 * `finish` codes.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import type { Clock } from '../../ports/clock.js';
import { StreamLimitError } from './openai-deadlines.js';
import type { Finish, ModelErrorCode } from '../../log/entries.js';

const CONTEXT_MESSAGE = /context[ _-]?(length|window|size)|maximum context|exceed_context_size|too many tokens/i;

/** The longest wait a server can ask for: a day. The header is untrusted; `1e308` seconds would be Infinity ms, which no log entry holds. */
export const MAX_RETRY_AFTER_MS = 86_400_000;
const waitMs = (ms: number) => Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));

/**
 * How long the server asks us to wait, in ms: `retry-after-ms`, else
 * `retry-after` as seconds or as an HTTP-date (relative to `now`).
 * Contract: pure given `now`; `undefined` when absent or unreadable; never negative, at most `MAX_RETRY_AFTER_MS`.
 */
export function parseRetryAfter(headers: Headers | undefined, now: Clock): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n)) return waitMs(n);
  }
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return waitMs(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : waitMs(at - now());
}

function codeForStatus(status: number, code: string, message: string): ModelErrorCode {
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 429) return 'RATE_LIMIT';
  if (status === 408) return 'TIMEOUT';
  if (status >= 500) return 'SERVER';
  if (status === 400 && (code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message))) return 'CONTEXT_WINDOW_EXCEEDED';
  if (status >= 400) return 'BAD_REQUEST';
  return 'UNKNOWN';
}

/** An `error` frame inside a 200 stream has no status of its own: read what its body says. */
export function codeForFrame(code: string, message: string): ModelErrorCode {
  if (code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message)) return 'CONTEXT_WINDOW_EXCEEDED';
  if (/rate_limit/i.test(code)) return 'RATE_LIMIT';
  if (code === 'invalid_api_key' || /auth/i.test(code)) return 'AUTH';
  return 'SERVER';
}

/** A frame's own status, when it carries one as `status` or as a numeric `code`. */
function frameStatus(err: APIError): number | undefined {
  const body = err.error as { status?: unknown; code?: unknown } | undefined;
  for (const v of [body?.status, body?.code]) {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
    if (n >= 400 && n < 600) return n;
  }
  return undefined;
}

/** undici reports a connection cut mid-body as `TypeError: terminated` (cause: a socket error). */
function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^(UND_ERR_|ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)/.test(code)) return true;
  return err instanceof TypeError && /^(terminated|fetch failed)$/.test(err.message);
}

const fail = (code: ModelErrorCode, message: string, extra: { status?: number; retryAfterMs?: number } = {}): Finish => {
  const f: Finish = { kind: 'error', code, message };
  if (extra.status !== undefined) f.status = extra.status;
  if (extra.retryAfterMs !== undefined) f.retryAfterMs = extra.retryAfterMs;
  return f;
};

/**
 * Any error thrown by the SDK or the fetch under it → a `finish`.
 * Contract: total — never throws; anything unrecognised is `UNKNOWN`.
 */
export function mapError(err: unknown, now: Clock = Date.now): Finish {
  try {
    if (err instanceof APIUserAbortError) return { kind: 'aborted' };
    // A deadline or the line cap (openai-deadlines.ts): thrown from the body, or from fetch and wrapped by the SDK.
    const limit = err instanceof StreamLimitError ? err : err instanceof APIConnectionError && err.cause instanceof StreamLimitError ? err.cause : undefined;
    if (limit) return fail(limit.code, limit.message);
    if (err instanceof APIConnectionTimeoutError) return fail('TIMEOUT', err.message);
    if (err instanceof APIConnectionError) {
      const cause = (err as { cause?: unknown }).cause;
      return fail('TRANSPORT', cause instanceof Error ? `${err.message} (${cause.message})` : err.message);
    }
    if (err instanceof APIError) {
      const code = typeof err.code === 'string' ? err.code : '';
      const status = err.status ?? frameStatus(err);
      if (status === undefined) return fail(codeForFrame(code, err.message), err.message);
      const mapped = codeForStatus(status, code, err.message);
      const retryAfterMs = mapped === 'RATE_LIMIT' || mapped === 'SERVER' ? parseRetryAfter(err.headers, now) : undefined;
      return fail(mapped, err.message, { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    if (err instanceof Error && err.name === 'AbortError') return { kind: 'aborted' };
    if (isNetworkError(err)) {
      const cause = (err as { cause?: unknown }).cause;
      return fail('TRANSPORT', cause instanceof Error ? `connection lost: ${cause.message}` : `connection lost: ${(err as Error).message}`);
    }
    return fail('UNKNOWN', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  } catch {
    return fail('UNKNOWN', 'unreadable error');
  }
}
