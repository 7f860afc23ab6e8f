/**
 * In-flight `bridle_run` calls of `bridle mcp --http`, process-wide, keyed by caller and request id (issue #23).
 * Over streamable HTTP a 2025 caller's `notifications/cancelled` is a POST of its own, handled by a fresh
 * per-request server that does not hold the running call: that server looks the call up here, by the caller's
 * identity (given at `initialize`) and the request id it names, and cancels it as an abort does. A request id is
 * the caller's own numbering, so two callers may use the same one: only the caller that made a call can cancel it.
 */

export type RequestId = string | number;

const keyOf = (caller: string, id: RequestId) => `${caller}\u0000${typeof id}:${String(id)}`;

export class HttpCalls {
  readonly #calls = new Map<string, () => void>();

  /** Records a running call; the returned function forgets it (call it when the call ends, however it ends). A second call under one key replaces the first. */
  add(caller: string, id: RequestId, cancel: () => void): () => void {
    const key = keyOf(caller, id);
    this.#calls.set(key, cancel);
    return () => {
      if (this.#calls.get(key) === cancel) this.#calls.delete(key);
    };
  }

  /** Cancels that caller's call with that id, once; false when it has none running. Contract: never touches another caller's call. */
  cancel(caller: string, id: RequestId): boolean {
    const key = keyOf(caller, id);
    const cancel = this.#calls.get(key);
    if (!cancel) return false;
    this.#calls.delete(key);
    cancel();
    return true;
  }

  get size(): number {
    return this.#calls.size;
  }
}
