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
import type { Clock } from '../../log/clock.js';
import { StreamLimitError } from './openai-deadlines.js';
import type { Finish, ModelErrorCode } from '../../log/entry-values.js';
import { codeForFrame, codeForStatus, parseRetryAfter } from './wire-codes.js';
import { ModelCode } from '../../log/entry-values.js';

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
    if (err instanceof APIConnectionTimeoutError) return fail(ModelCode.TIMEOUT, err.message);
    if (err instanceof APIConnectionError) {
      const cause = (err as { cause?: unknown }).cause;
      return fail(ModelCode.TRANSPORT, cause instanceof Error ? `${err.message} (${cause.message})` : err.message);
    }
    if (err instanceof APIError) {
      const code = typeof err.code === 'string' ? err.code : '';
      const status = err.status ?? frameStatus(err);
      if (status === undefined) return fail(codeForFrame(code, err.message), err.message);
      const mapped = codeForStatus(status, code, err.message);
      const retryAfterMs = mapped === ModelCode.RATE_LIMIT || mapped === ModelCode.SERVER ? parseRetryAfter(err.headers, now) : undefined;
      return fail(mapped, err.message, { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    if (err instanceof Error && err.name === 'AbortError') return { kind: 'aborted' };
    if (isNetworkError(err)) {
      const cause = (err as { cause?: unknown }).cause;
      return fail(ModelCode.TRANSPORT, cause instanceof Error ? `connection lost: ${cause.message}` : `connection lost: ${(err as Error).message}`);
    }
    return fail(ModelCode.UNKNOWN, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  } catch {
    return fail(ModelCode.UNKNOWN, 'unreadable error');
  }
}
