/**
 * The `prepareRequest` actor: the request is built from the log alone — the
 * header (system prompt, tool schemas, params) is logged whenever it differs
 * from the last one logged, and the messages are the log's projection (I1).
 */
import { fromPromise } from 'xstate';
import type { DraftOf, EntryOf } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';
import type { Recorder } from '../log/recorder.js';
import type { StepInput } from '../machines/step.machine.js';

export type HeaderParts = Pick<DraftOf<'request/header'>, 'system' | 'tools' | 'params'>;

const headerKey = (h: HeaderParts) => JSON.stringify([h.system, h.tools, h.params]);

export function lastHeader(entries: readonly { kind: string }[]): EntryOf<'request/header'> | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.kind === 'request/header') return entries[i] as EntryOf<'request/header'>;
  return undefined;
}

/** Builds the request a step sends; `header` is asked anew each step so plugins may change it. */
export function prepareRequestActor(recorder: Recorder, header: () => HeaderParts) {
  const prev = lastHeader(recorder.entries);
  let lastKey = prev ? headerKey(prev) : '';
  return fromPromise<ModelRequest, StepInput>(async ({ input, signal }) => {
    // xstate starts an actor's invoked children before it runs its initial state's entry actions;
    // one microtask lets the step log step/start before this logs the step's header.
    await Promise.resolve();
    // A step cancelled meanwhile has already logged its end: a header now would land outside it.
    if (signal.aborted) throw new Error('prepareRequest: the step was cancelled');
    const h = header();
    const key = headerKey(h);
    if (key !== lastKey) {
      recorder.append({ kind: 'request/header', turn: input.turn, step: input.step, system: h.system, tools: h.tools, params: h.params });
      lastKey = key;
    }
    const req: ModelRequest = { model: h.params.model, system: h.system, tools: h.tools, messages: recorder.projection.messages };
    if (h.params.temperature !== undefined) req.temperature = h.params.temperature;
    if (h.params.maxTokens !== undefined) req.maxTokens = h.params.maxTokens;
    return req;
  });
}
