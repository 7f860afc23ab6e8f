import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import { describe, expect, test } from 'vitest';
import { Finish } from '../../log/entry-values.js';
import { mapError } from './openai-errors.js';
import { parseRetryAfter } from './wire-codes.js';

const h = (init: Record<string, string> = {}) => new Headers(init);
const body = (message: string, code: string | null = null) => ({ message, type: 't', code });
const NOW = Date.parse('2025-06-01T12:00:00Z');
const now = () => NOW;

describe('parseRetryAfter', () => {
  test('retry-after-ms wins over retry-after', () => {
    expect(parseRetryAfter(h({ 'retry-after-ms': '250.5', 'retry-after': '9' }), now)).toBe(250.5);
  });
  test('seconds, HTTP-date, past dates clamp to 0, junk is undefined', () => {
    expect(parseRetryAfter(h({ 'retry-after': '3' }), now)).toBe(3000);
    expect(parseRetryAfter(h({ 'retry-after': new Date(NOW + 7000).toUTCString() }), now)).toBe(7000);
    expect(parseRetryAfter(h({ 'retry-after': new Date(NOW - 7000).toUTCString() }), now)).toBe(0);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(h(), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
  test('an out-of-range retry-after is capped to a day, never Infinity (the log would reject the finish)', () => {
    const cases: Record<string, string>[] = [{ 'retry-after': '1e308' }, { 'retry-after-ms': '1e300' }, { 'retry-after': new Date(8.64e15).toUTCString() }];
    for (const headers of cases) {
      const ms = parseRetryAfter(h(headers), now);
      expect(ms).toBe(86_400_000);
      expect(Finish.safeParse({ kind: 'error', code: 'RATE_LIMIT', message: 'm', retryAfterMs: ms }).success).toBe(true);
    }
  });
});

describe('mapError', () => {
  test('HTTP statuses', () => {
    expect(mapError(new AuthenticationError(401, body('bad key'), undefined, h()), now)).toMatchObject({ code: 'AUTH', status: 401 });
    expect(mapError(APIError.generate(403, { error: body('no') }, undefined, h()), now)).toMatchObject({ code: 'AUTH', status: 403 });
    expect(mapError(new RateLimitError(429, body('slow'), undefined, h({ 'retry-after': '1' })), now)).toEqual({
      kind: 'error', code: 'RATE_LIMIT', status: 429, retryAfterMs: 1000, message: '429 slow',
    });
    expect(mapError(new BadRequestError(400, body('long', 'context_length_exceeded'), undefined, h()), now)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(mapError(new BadRequestError(400, body('the request exceeds the available context size'), undefined, h()), now)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(mapError(new BadRequestError(400, body('bad'), undefined, h()), now)).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(mapError(APIError.generate(422, { error: body('x') }, undefined, h()), now)).toMatchObject({ code: 'BAD_REQUEST', status: 422 });
    expect(mapError(new InternalServerError(503, body('down'), undefined, h({ 'retry-after': '2' })), now)).toMatchObject({ code: 'SERVER', status: 503, retryAfterMs: 2000 });
  });

  test('connection-level errors and aborts', () => {
    expect(mapError(new APIConnectionTimeoutError(), now)).toMatchObject({ code: 'TIMEOUT' });
    expect(mapError(new APIConnectionError({ message: 'Connection error.', cause: new TypeError('fetch failed') }), now)).toMatchObject({ code: 'TRANSPORT' });
    expect(mapError(new APIUserAbortError(), now)).toEqual({ kind: 'aborted' });
    expect(mapError(Object.assign(new Error('x'), { name: 'AbortError' }), now)).toEqual({ kind: 'aborted' });
    const cut = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(mapError(cut, now)).toMatchObject({ code: 'TRANSPORT', message: 'connection lost: other side closed' });
  });

  test('error frames (no status): by code, SERVER when unknown', () => {
    const frame = (e: object) => new APIError(undefined, e, undefined, h());
    expect(mapError(frame({ message: 'boom' }), now)).toMatchObject({ code: 'SERVER' });
    expect(mapError(frame({ message: 'x', code: 'rate_limit_exceeded' }), now)).toMatchObject({ code: 'RATE_LIMIT' });
    expect(mapError(frame({ message: 'x', code: 'context_length_exceeded' }), now)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(mapError(frame({ message: 'x', status: 502 }), now)).toMatchObject({ code: 'SERVER', status: 502 });
  });

  test('anything else is UNKNOWN, and mapError itself never throws', () => {
    expect(mapError(new SyntaxError('Unexpected token'), now)).toMatchObject({ code: 'UNKNOWN', message: 'SyntaxError: Unexpected token' });
    expect(mapError('a string', now)).toMatchObject({ code: 'UNKNOWN', message: 'a string' });
    expect(mapError(undefined, now)).toMatchObject({ code: 'UNKNOWN' });
    const hostile = new Proxy({}, { get: () => { throw new Error('trap'); }, getPrototypeOf: () => { throw new Error('trap'); } });
    expect(mapError(hostile, now)).toMatchObject({ kind: 'error', code: 'UNKNOWN' });
  });
});
