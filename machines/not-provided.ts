import { fromPromise, type PromiseActorLogic } from 'xstate';
import type { Draft } from '../log/entries.js';

/**
 * The default for an actor slot that the host must fill with `.provide()`:
 * it fails loudly, and the machine's `onError` path treats that as a failure
 * (a missing approval denies, a missing executor errors the call).
 */
export function notProvided<TOut, TIn = void>(name: string): PromiseActorLogic<TOut, TIn> {
  return fromPromise<TOut, TIn>(async () => {
    throw new Error(`${name}: not provided`);
  });
}

/**
 * The `record` action, named, for use inside `enqueueActions` (whose `enqueue`
 * cannot see the machine's own action names in its types). The host provides
 * `record`; every machine declares it with a `Draft` parameter.
 */
export const recordAction = (draft: Draft): never => ({ type: 'record', params: draft }) as never;
