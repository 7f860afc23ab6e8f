/**
 * The `streamModel` actor: runs a provider's stream and sends each chunk to
 * the step as `model.chunk.received`. It backs up the adapter contract: if a
 * provider throws or stops without a finish anyway, the step still receives
 * exactly one finish (I8). And it bounds the answer: one that grows past
 * `maxAnswerBytes` (escaped, as the log will hold it) ends there with the
 * finish `OUTPUT_TOO_LARGE`, without the chunk that crossed it, and the
 * provider's stream is stopped — so the `assistant/message` is always a line
 * the log's reader takes back. Replay re-streams the logged (cut) answer and
 * its finish: within the limit, so the same cut is never made twice.
 *
 * It also times the answer (ADR 0079): the session's clock is read when the
 * request goes out and when the provider says the response's first chunk
 * arrived (a bare `first-chunk`); the step gets the difference, which the
 * `assistant/message` logs. A `first-chunk` that brings its own time (replay,
 * from the log) is passed on as it is. Hosts are not sent it: it is no text.
 * The timed `first-chunk` rides the event of the chunk after it (`first`), not
 * an event of its own: an XState event is most of a chunk's cost (ADR 0110).
 * A stream stopped between the two loses only that timing: its answer logs no
 * `firstChunkMs`.
 */
import { fromCallback } from 'xstate';
import type { Chunk } from '../log/chunks.js';
import { escapedBytes, MAX_ANSWER_BYTES } from '../log/entry-size.js';
import { turnOf } from '../log/ids.js';
import type { ModelRequest } from '../log/messages.js';
import type { Clock } from '../log/clock.js';
import type { StepEvent } from '../machines/step.machine.js';
import type { StreamPayload } from '../ports/hooks.js';
import type { ModelProvider } from '../ports/model.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import { ModelCode } from '../log/entry-values.js';

export type DeltaSink = (chunk: Chunk, step: string) => void;

/**
 * The model call through the `llm/stream` waterfall when anything listens
 * (a cache may answer a request without `next()`; whatever answers, the
 * answer is chunks, assembled and logged like the provider's), else straight
 * to the provider. A listener that throws answers with an `UNKNOWN` finish.
 */
function streamOf(provider: ModelProvider, hooks: HookRegistry | undefined, report: HookReporter | undefined, input: { request: ModelRequest; step: string; attempt: number }, signal: AbortSignal): AsyncIterable<Chunk> {
  if (!hooks?.has('llm/stream')) return provider.stream(input.request, signal);
  // The payload is for the listeners: none listening, none built.
  const payload: StreamPayload = { request: input.request, turn: turnOf(input.step), step: input.step, attempt: input.attempt - 1, signal };
  const answer = hooks.waterfall('llm/stream', payload, async (p) => provider.stream(p.request, p.signal), {
    accepts: (v): v is AsyncIterable<Chunk> => typeof (v as AsyncIterable<Chunk> | null)?.[Symbol.asyncIterator] === 'function',
    onThrow: (owner, err) => failing(`llm/stream listener ${owner} failed: ${String(err)}`),
    report: (listener, problem) => report?.({ hook: 'llm/stream', listener, problem, step: payload.step, turn: payload.turn }),
  });
  return (async function* () {
    yield* await answer;
  })();
}

async function* failing(message: string): AsyncGenerator<Chunk> {
  yield { type: 'finish', finish: { kind: 'error', code: ModelCode.UNKNOWN, message } };
}

export type HookReporter = (p: { hook: string; listener: string; problem: string; turn?: string; step?: string }) => void;

/** What a chunk adds to the logged answer, in escaped bytes (the JSON around each block is small and bounded by the count of blocks). */
function sizeOf(chunk: Chunk): number {
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return escapedBytes(chunk.text);
    case 'tool-call-delta':
      return escapedBytes(chunk.argumentsDelta);
    case 'block-start':
      return 64 + (chunk.block.type === 'tool-call' ? escapedBytes(chunk.block.id) * 2 + escapedBytes(chunk.block.name) : 0);
    default:
      return 0;
  }
}

/** A time a provider gave: whole, non-negative milliseconds, or nothing (the log's schema takes no other). */
const givenMs = (ms: unknown): number | undefined => (typeof ms === 'number' && Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined);

export function streamModelActor(provider: ModelProvider, onChunk?: DeltaSink, hooks?: HookRegistry, report?: HookReporter, maxAnswerBytes = MAX_ANSWER_BYTES, clock?: Clock) {
  return fromCallback<StepEvent, { request: ModelRequest; step: string; attempt: number }>(({ input, sendBack }) => {
    const controller = new AbortController();
    let finished = false;
    let bytes = 0;
    let sentAt: number | undefined;
    let timed = false;
    /** The timed first chunk, until the next chunk's event takes it. */
    let first: Extract<Chunk, { type: 'first-chunk' }> | undefined;
    /** The first `first-chunk` of the stream, timed; any later one, and one nothing can time, says nothing. */
    const firstChunk = (chunk: Extract<Chunk, { type: 'first-chunk' }>) => {
      if (timed) return;
      timed = true;
      const ms = givenMs(chunk.ms) ?? (sentAt !== undefined && clock ? Math.max(0, Math.round(clock() - sentAt)) : undefined);
      if (ms !== undefined) first = { type: 'first-chunk', ms };
    };
    const emit = (chunk: Chunk) => {
      if (finished || controller.signal.aborted) return;
      if (chunk.type === 'first-chunk') return firstChunk(chunk);
      bytes += sizeOf(chunk);
      if (bytes > maxAnswerBytes && chunk.type !== 'finish') {
        emit({ type: 'finish', finish: { kind: 'error', code: ModelCode.OUTPUT_TOO_LARGE, message: `the answer passed ${maxAnswerBytes} bytes, the most one log entry may hold: cut there` } });
        // The provider's stream is stopped now, not drained.
        controller.abort();
        return;
      }
      if (chunk.type === 'finish') finished = true;
      onChunk?.(chunk, input.step);
      if (first === undefined) return sendBack({ type: 'model.chunk.received', chunk });
      sendBack({ type: 'model.chunk.received', chunk, first });
      first = undefined;
    };
    (async () => {
      try {
        sentAt = clock?.();
        for await (const chunk of streamOf(provider, hooks, report, input, controller.signal)) {
          emit(chunk);
          if (finished) break;
        }
        if (!finished) emit({ type: 'finish', finish: { kind: 'error', code: ModelCode.TRANSPORT, message: `${provider.id}: stream ended without a finish` } });
      } catch (err) {
        emit({ type: 'finish', finish: { kind: 'error', code: ModelCode.UNKNOWN, message: `${provider.id} threw across the stream: ${String(err)}` } });
      }
    })();
    // After the finish the stream is over (the loop breaks, closing the provider's iterator): an abort now would only
    // build an AbortError nobody reads, once per step (ADR 0007).
    return () => {
      if (!finished) controller.abort();
    };
  });
}
