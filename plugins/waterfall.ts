/**
 * The waterfall: listeners run in registration order, each with the payload
 * and `next`, which runs the rest of the chain (ending in a terminal) and
 * resolves with its verdict. A listener may pass a changed payload to `next`,
 * wrap it (call it, look at the result, call it again), or answer without it.
 */

import type { Listener, Next } from '../ports/hooks.js';


export interface Registered<P, R> {
  /** Who registered it: a plugin's name; used in `hook/report` entries. */
  owner: string;
  listener: Listener<P, R>;
}

export interface WaterfallOptions<R> {
  hook: string;
  /** A listener's own verdict against what `next()` gave it; lets a hook forbid loosening a verdict from further down. */
  clamp?: (own: R, downstream: R) => R;
  /** A verdict of the wrong shape is treated as a throw. */
  accepts?: (value: unknown) => value is R;
  /** The verdict for a listener that threw; without it, the error propagates. */
  onThrow?: (owner: string, error: unknown) => R;
  /** Where problems go: a silent listener, a throw, a malformed verdict. */
  report: (owner: string, problem: string) => void;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A listener's failure, reported and answered by `onThrow` (or rethrown when there is none). */
function failed<R>(o: WaterfallOptions<R>, owner: string, problem: string, err: unknown): R {
  o.report(owner, problem);
  if (o.onThrow) return o.onThrow(owner, err);
  throw err;
}

/** The terminal's verdict as a promise, a synchronous throw as a rejection: what an async step of the chain gave. */
function ending<P, R>(terminal: (payload: P) => Promise<R>, p: P): Promise<R> {
  try {
    return Promise.resolve(terminal(p));
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Contract: resolves with the chain's verdict. A listener that neither calls
 * `next()` nor returns a verdict is reported and skipped (the chain goes on as
 * if it had called `next()`); a throw or a malformed verdict is reported and
 * answered by `onThrow` (or rethrown when there is none).
 */
export async function runWaterfall<P, R>(
  listeners: readonly Registered<P, R>[],
  payload: P,
  terminal: (payload: P) => Promise<R>,
  o: WaterfallOptions<R>,
): Promise<R> {
  // Past the last listener `next` is the terminal itself, called at once: no step of the chain around it.
  const rest = (i: number, p: P): Promise<R> => (i < listeners.length ? at(i, p) : ending(terminal, p));
  const at = async (i: number, p: P): Promise<R> => {
    const entry = listeners[i]!;
    let pending: Promise<R> | undefined;
    let heard = false;
    let downstream: R | undefined;
    const next: Next<P, R> = (q) => {
      pending = rest(i + 1, q === undefined ? p : q).then((value) => {
        heard = true;
        downstream = value;
        return value;
      });
      return pending;
    };
    let own: R | void;
    try {
      own = await entry.listener(p, next);
    } catch (err) {
      return failed(o, entry.owner, `threw: ${describe(err)}`, err);
    }
    if (own === undefined) {
      if (pending) return pending;
      o.report(entry.owner, 'neither called next() nor returned a decision; skipped');
      return rest(i + 1, p);
    }
    if (o.accepts && !o.accepts(own)) return failed(o, entry.owner, `returned an invalid decision: ${JSON.stringify(own)}`, new Error('invalid decision'));
    if (pending && !heard) await pending.catch(() => undefined);
    return heard && o.clamp ? o.clamp(own as R, downstream as R) : (own as R);
  };
  return rest(0, payload);
}
