/**
 * Deadlines and a line cap for model streams, enforced under the SDK: a
 * `fetch` that wraps the response body before the SDK's decoder sees it
 * (ADR 0012). The SDK's own timeout stops at the headers, and its line
 * decoder copies and rescans its whole buffer on every read, so a body
 * that stalls, trickles, pings forever or never sends a newline would hang
 * the turn or grow without bound.
 *
 * - idle: no `data:` line for `idleMs` (from the request on, so missing
 *   headers count). Comment lines (`: ping`) and other fields are not data:
 *   a server that only keeps the connection alive is idle.
 * - total: the whole request, headers to the last byte, within `totalMs`.
 * - line: at most `maxLineBytes` bytes between two line ends.
 */
import type { ModelErrorCode } from '../../log/entry-values.js';
import { ModelCode } from '../../log/entry-values.js';

export interface StreamLimits {
  idleMs: number;
  totalMs: number;
  maxLineBytes: number;
}

/**
 * Idle: five minutes, for reasoning models that think long before their first
 * token. Total: thirty minutes, a long answer at a slow rate. A line: 4 MiB,
 * room for a tool call's arguments sent whole in one chunk (a file's content).
 */
export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ idleMs: 300_000, totalMs: 1_800_000, maxLineBytes: 4 * 1024 * 1024 });

/** Contract: pure; the one place the defaults are filled: every limit not given (or undefined) is the default. */
export function resolveStreamLimits(given: Partial<StreamLimits> = {}): StreamLimits {
  return {
    idleMs: given.idleMs ?? DEFAULT_STREAM_LIMITS.idleMs,
    totalMs: given.totalMs ?? DEFAULT_STREAM_LIMITS.totalMs,
    maxLineBytes: given.maxLineBytes ?? DEFAULT_STREAM_LIMITS.maxLineBytes,
  };
}

/** A limit the stream broke; `code` is the finish it ends in. */
export class StreamLimitError extends Error {
  constructor(
    readonly limit: 'idle' | 'total' | 'line',
    readonly code: Extract<ModelErrorCode, typeof ModelCode.TIMEOUT | typeof ModelCode.TRANSPORT>,
    message: string,
  ) {
    super(message);
    this.name = 'StreamLimitError';
  }
}

const idleError = (l: StreamLimits) => new StreamLimitError('idle', ModelCode.TIMEOUT, `no data from the model for ${l.idleMs} ms (streamIdleMs)`);
const totalError = (l: StreamLimits) => new StreamLimitError('total', ModelCode.TIMEOUT, `the model stream ran past its total deadline of ${l.totalMs} ms (streamTotalMs)`);
const lineError = (l: StreamLimits) => new StreamLimitError('line', ModelCode.TRANSPORT, `a stream line passed ${l.maxLineBytes} bytes without a newline (maxLineBytes)`);

const DATA = [0x64, 0x61, 0x74, 0x61, 0x3a]; // "data:"
const LF = 0x0a;
const CR = 0x0d;

export interface GuardedBody {
  readonly stream: ReadableStream<Uint8Array>;
  /** Errors the stream with `err` and cancels the source; the first failure wins. */
  fail(err: StreamLimitError): void;
}

export interface BodyHooks {
  /** At the end of each `data:` line. */
  onData?: () => void;
  /** When the line cap is broken (the stream has already failed). */
  onTrip?: (err: StreamLimitError) => void;
  /** Once, when the body ends, fails or is cancelled. */
  onEnd?: () => void;
}

/**
 * `body`, passed through as is, with the line cap enforced. On a breach (or
 * `fail`) the stream errors with the `StreamLimitError` and the source is
 * cancelled: nothing more is read. Linear in the bytes it sees.
 */
export function guardBody(body: ReadableStream<Uint8Array>, limits: StreamLimits, hooks: BodyHooks = {}): GuardedBody {
  const reader = body.getReader();
  let lineBytes = 0;
  let isData = true;
  let failed: StreamLimitError | undefined;
  let ended = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const end = () => {
    if (ended) return;
    ended = true;
    hooks.onEnd?.();
  };
  const fail = (err: StreamLimitError) => {
    if (failed || ended) return;
    failed = err;
    controller.error(err);
    reader.cancel(err).catch(() => {});
    end();
  };
  const scan = (bytes: Uint8Array) => {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === LF || b === CR) {
        if (lineBytes > limits.maxLineBytes) break;
        if (isData && lineBytes >= DATA.length) hooks.onData?.();
        lineBytes = 0;
        isData = true;
        continue;
      }
      if (lineBytes < DATA.length) isData &&= b === DATA[lineBytes];
      lineBytes++;
    }
    if (lineBytes > limits.maxLineBytes) {
      const err = lineError(limits);
      fail(err);
      hooks.onTrip?.(err);
    }
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        if (failed) return;
        end();
        return c.error(err);
      }
      if (failed) return;
      if (next.done) {
        end();
        return c.close();
      }
      scan(next.value);
      if (!failed) c.enqueue(next.value);
    },
    cancel(reason) {
      end();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return { stream, fail };
}

/**
 * A `fetch` for the SDK that holds every request to `limits`: a breach
 * aborts the request and surfaces as the `StreamLimitError` — from `fetch`
 * itself before the headers, from the body after. Timers never keep the
 * process alive and are cleared when the body ends, fails or is abandoned.
 */
export function guardFetch(inner: typeof fetch, limits: StreamLimits): typeof fetch {
  return async (input, init) => {
    const upstream = new AbortController();
    let tripped: StreamLimitError | undefined;
    let failBody: ((err: StreamLimitError) => void) | undefined;
    const idle = setTimeout(() => trip(idleError(limits)), limits.idleMs);
    const total = setTimeout(() => trip(totalError(limits)), limits.totalMs);
    idle.unref();
    total.unref();
    const done = () => {
      clearTimeout(idle);
      clearTimeout(total);
    };
    function trip(err: StreamLimitError) {
      if (tripped) return;
      tripped = err;
      done();
      // The body fails first, so the SDK's pending read sees this error, not the abort's.
      failBody?.(err);
      upstream.abort(err);
    }
    const signal = init?.signal ? AbortSignal.any([init.signal, upstream.signal]) : upstream.signal;
    // The caller giving up (the SDK's abort, the user's cancel) ends the deadlines too.
    signal.addEventListener('abort', done, { once: true });
    let res: Response;
    try {
      res = await inner(input, { ...init, signal });
    } catch (err) {
      done();
      throw tripped ?? err;
    }
    if (tripped) throw tripped;
    if (!res.body) {
      done();
      return res;
    }
    const guarded = guardBody(res.body, limits, { onData: () => idle.refresh(), onTrip: trip, onEnd: done });
    failBody = guarded.fail;
    const out = new Response(guarded.stream, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}
