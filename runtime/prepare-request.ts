/**
 * The `prepareRequest` action: the request is built from the log alone — the
 * header (system prompt, tool schemas, params) is logged whenever it differs
 * from the last one logged, and the messages are the log's projection (I1).
 * It is synchronous, so it is an action that answers the step with an event
 * rather than an invoked actor (ADR 0007): it runs right after the step's
 * `step/start`, before any other event reaches the step, so the header always
 * lands inside its step and a cancelled step never gets one afterwards.
 */
import type { DraftOf, EntryOf } from '../log/entries.js';
import type { ReasoningProvider } from '../log/entry-values.js';
import type { ModelMessage, ModelRequest } from '../log/messages.js';
import type { Recorder } from '../log/recorder.js';
import type { StepRef } from '../machines/drafts.js';
import type { StepEvent } from '../machines/step.machine.js';

export type HeaderParts = Pick<DraftOf<'request/header'>, 'system' | 'tools' | 'params'>;

/** Reasoning blocks of `messages` that carry a payload for a wire other than `own`: the ones its request drops. */
export function foreignReasoning(messages: readonly ModelMessage[], own: ReasoningProvider | undefined): number {
  let n = 0;
  for (const m of messages) if (m.role === 'assistant' && m.carried) for (const r of m.carried) if (r.provider !== own) n++;
  return n;
}

const headerKey = (h: HeaderParts) => JSON.stringify([h.system, h.tools, h.params]);

export function lastHeader(entries: readonly { kind: string }[]): EntryOf<'request/header'> | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.kind === 'request/header') return entries[i] as EntryOf<'request/header'>;
  return undefined;
}

/** Builds the request a step sends; `header` is asked anew each step so plugins may change it. */
export function prepareRequestAction(recorder: Recorder, header: () => HeaderParts) {
  const prev = lastHeader(recorder.entries);
  let lastKey = prev ? headerKey(prev) : '';
  // The header source hands back the same object while nothing changed (prompt/header.ts): no key to build then.
  let lastParts: HeaderParts | undefined;
  const prepare = (ref: StepRef): ModelRequest => {
    const h = header();
    if (h !== lastParts) {
      const key = headerKey(h);
      if (key !== lastKey) {
        // Foreign reasoning can only be in the log from before a provider change, which changes `params.reasoning`: so a new header is logged, and says what its wire drops.
        const dropped = foreignReasoning(recorder.projection.messages, h.params.reasoning);
        recorder.append({ kind: 'request/header', turn: ref.turn, step: ref.step, system: h.system, tools: h.tools, params: h.params, ...(dropped > 0 ? { droppedReasoning: dropped } : {}) });
        lastKey = key;
      }
      lastParts = h;
    }
    const req: ModelRequest = { model: h.params.model, system: h.system, tools: h.tools, messages: recorder.projection.messages };
    if (h.params.temperature !== undefined) req.temperature = h.params.temperature;
    if (h.params.maxTokens !== undefined) req.maxTokens = h.params.maxTokens;
    const start = recorder.entries[0];
    if (start?.kind === 'session/start') req.cacheKey = start.id;
    return req;
  };
  /** Contract: never throws; a header source that throws answers `step.request.failed`. */
  return ({ self }: { self: { send(event: StepEvent): void } }, ref: StepRef): void => {
    let answer: StepEvent;
    try {
      answer = { type: 'step.request.prepared', request: prepare(ref) };
    } catch (err) {
      answer = { type: 'step.request.failed', error: String(err) };
    }
    self.send(answer);
  };
}
