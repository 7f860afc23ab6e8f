/**
 * What every model wire reads the same way, with no SDK loaded: a status or
 * an in-stream error frame → bridle's normalized codes, and how long a
 * server asks us to wait. The SDKs' own error classes are matched in
 * `openai-errors.ts` and `anthropic-errors.ts`, loaded with their SDK at
 * the first request (ADR 0071).
 */
import type { Clock } from '../../log/clock.js';
import type { ModelErrorCode } from '../../log/entry-values.js';
import { ModelCode } from '../../log/entry-values.js';

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

export function codeForStatus(status: number, code: string, message: string): ModelErrorCode {
  if (status === 401 || status === 403) return ModelCode.AUTH;
  if (status === 429) return ModelCode.RATE_LIMIT;
  if (status === 408) return ModelCode.TIMEOUT;
  if (status >= 500) return ModelCode.SERVER;
  if (status === 400 && (code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message))) return ModelCode.CONTEXT_WINDOW_EXCEEDED;
  if (status >= 400) return ModelCode.BAD_REQUEST;
  return ModelCode.UNKNOWN;
}

/** An `error` frame inside a 200 stream has no status of its own: read what its body says. */
export function codeForFrame(code: string, message: string): ModelErrorCode {
  if (code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message)) return ModelCode.CONTEXT_WINDOW_EXCEEDED;
  if (/rate_limit/i.test(code)) return ModelCode.RATE_LIMIT;
  if (code === 'invalid_api_key' || /auth/i.test(code)) return ModelCode.AUTH;
  return ModelCode.SERVER;
}
