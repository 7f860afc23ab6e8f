/**
 * The `streamModel` actor: runs a provider's stream and sends each chunk to
 * the step as `model.chunk.received`. It backs up the adapter contract: if a
 * provider throws or stops without a finish anyway, the step still receives
 * exactly one finish (I8).
 */
import { fromCallback } from 'xstate';
import type { Chunk } from '../log/chunks.js';
import type { ModelRequest } from '../log/messages.js';
import type { StepEvent } from '../machines/step.machine.js';
import type { ModelProvider } from '../ports/model.js';

export type DeltaSink = (chunk: Chunk, step: string) => void;

export function streamModelActor(provider: ModelProvider, onChunk?: DeltaSink) {
  return fromCallback<StepEvent, { request: ModelRequest; step: string; attempt: number }>(({ input, sendBack }) => {
    const controller = new AbortController();
    let finished = false;
    const emit = (chunk: Chunk) => {
      if (finished || controller.signal.aborted) return;
      if (chunk.type === 'finish') finished = true;
      onChunk?.(chunk, input.step);
      sendBack({ type: 'model.chunk.received', chunk });
    };
    (async () => {
      try {
        for await (const chunk of provider.stream(input.request, controller.signal)) {
          emit(chunk);
          if (finished) break;
        }
        if (!finished) emit({ type: 'finish', finish: { kind: 'error', code: 'TRANSPORT', message: `${provider.id}: stream ended without a finish` } });
      } catch (err) {
        emit({ type: 'finish', finish: { kind: 'error', code: 'UNKNOWN', message: `${provider.id} threw across the stream: ${String(err)}` } });
      }
    })();
    // After the finish the stream is over (the loop breaks, closing the provider's iterator): an abort now would only
    // build an AbortError nobody reads, once per step (ADR 0007).
    return () => {
      if (!finished) controller.abort();
    };
  });
}
