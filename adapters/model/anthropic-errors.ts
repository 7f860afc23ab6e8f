/**
 * Errors from the Anthropic SDK (and the fetch under it) → I8's normalized
 * `finish` codes. The HTTP status decides first (401/403 AUTH, 429
 * RATE_LIMIT, 529 `overloaded_error` and 5xx SERVER, both with the server's
 * `retry-after` for bridle's own retry); a 400 whose error says the prompt
 * is too long is CONTEXT_WINDOW_EXCEEDED, so overflow-compaction runs.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { Clock } from '../../log/clock.js';
import type { Finish, ModelErrorCode } from '../../log/entry-values.js';
import { StreamLimitError } from './openai-deadlines.js';
import { parseRetryAfter } from './wire-codes.js';
import { codeForAnthropicError } from './anthropic-stream.js';
import { ModelCode } from '../../log/entry-values.js';

function codeFor(status: number, type: string, message: string): ModelErrorCode {
  if (status === 401 || status === 403) return ModelCode.AUTH;
  if (status === 429) return ModelCode.RATE_LIMIT;
  if (status === 408 || status === 504) return ModelCode.TIMEOUT;
  if (status === 413) return ModelCode.CONTEXT_WINDOW_EXCEEDED;
  if (status >= 500) return ModelCode.SERVER;
  if (status === 400) return codeForAnthropicError(type, message) === ModelCode.CONTEXT_WINDOW_EXCEEDED ? ModelCode.CONTEXT_WINDOW_EXCEEDED : ModelCode.BAD_REQUEST;
  return status >= 400 ? ModelCode.BAD_REQUEST : ModelCode.UNKNOWN;
}

/** Contract: total — never throws; anything unrecognised is `UNKNOWN`. */
export function mapAnthropicError(err: unknown, now: Clock = Date.now): Finish {
  try {
    if (err instanceof APIUserAbortError) return { kind: 'aborted' };
    const limit = err instanceof StreamLimitError ? err : err instanceof APIConnectionError && err.cause instanceof StreamLimitError ? err.cause : undefined;
    if (limit) return { kind: 'error', code: limit.code, message: limit.message };
    if (err instanceof APIConnectionTimeoutError) return { kind: 'error', code: ModelCode.TIMEOUT, message: err.message };
    if (err instanceof APIConnectionError) return { kind: 'error', code: ModelCode.TRANSPORT, message: err.message };
    if (err instanceof APIError) {
      const type = typeof err.type === 'string' ? err.type : '';
      const message = err.apiMessage ?? err.message;
      if (err.status === undefined) return { kind: 'error', code: codeForAnthropicError(type, message), message };
      const code = codeFor(err.status, type, message);
      const f: Finish = { kind: 'error', code, message, status: err.status };
      const wait = code === ModelCode.RATE_LIMIT || code === ModelCode.SERVER ? parseRetryAfter(err.headers, now) : undefined;
      if (wait !== undefined) f.retryAfterMs = wait;
      return f;
    }
    if (err instanceof Error && err.name === 'AbortError') return { kind: 'aborted' };
    if (err instanceof TypeError && /^(terminated|fetch failed)$/.test(err.message)) return { kind: 'error', code: ModelCode.TRANSPORT, message: `connection lost: ${err.message}` };
    return { kind: 'error', code: ModelCode.UNKNOWN, message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  } catch {
    return { kind: 'error', code: ModelCode.UNKNOWN, message: 'unreadable error' };
  }
}
