/**
 * Group commit across sessions (ADR 0073): the flushes every session of this
 * process asks for in one tick run together, as one round, and the flushes
 * asked for while a round runs wait for the next one (the ticks batched).
 * The JSONL store runs one fdatasync per file in a round, all at once
 * (`jsonl.ts`); the Postgres store one transaction for all its sessions
 * (`postgres-commit.ts`).
 *
 * A round starts at the end of the tick it was first asked for in (after the
 * microtasks: the dispatches of calls released together, and every other
 * session's machines run by the same event), or as soon as the round before
 * it has ended. A member is in a round once, however often it asked; each
 * member's flush settles with its own outcome, so one failing member fails
 * only its own session's flush.
 */

/** One round's work: every member asked for, each once; resolves with each member's outcome, in their order. Contract: never rejects. */
export type RunRound<M> = (members: readonly M[]) => Promise<readonly (Error | undefined)[]>;

export interface FlushRounds<M> {
  /**
   * Puts `member` in the next round (once, however often asked before it starts).
   * Contract: resolves once that round has made the member durable; rejects with the member's own error.
   */
  request(member: M): Promise<void>;
  /** Rounds run so far, and members flushed in them (a member per round counted once): for benchmarks and tests. */
  readonly stats: { rounds: number; members: number };
}

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function waiter(): Waiter {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A flush nobody awaits (a fire-and-forget one) must not be an unhandled rejection; whoever awaits still sees it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Contract: `run` never rejects (a rejection fails every member of its round); rounds never overlap. */
export function createFlushRounds<M>(run: RunRound<M>, defer: (fn: () => void) => void = setImmediate): FlushRounds<M> {
  let next = new Map<M, Waiter>();
  let scheduled = false;
  let running = false;
  const stats = { rounds: 0, members: 0 };

  const start = () => {
    scheduled = false;
    if (running || next.size === 0) return;
    const round = next;
    next = new Map();
    running = true;
    stats.rounds++;
    stats.members += round.size;
    const members = [...round.keys()];
    const settle = (outcomes: readonly (Error | undefined)[]) => {
      members.forEach((m, i) => {
        const w = round.get(m)!;
        const err = outcomes[i];
        if (err) w.reject(err);
        else w.resolve();
      });
    };
    void run(members)
      .then(settle, (err: unknown) => settle(members.map(() => (err instanceof Error ? err : new Error(String(err))))))
      .finally(() => {
        running = false;
        // What was asked for while this round ran is the next round, with what the sessions this one released ask
        // for in the same tick.
        if (next.size > 0 && !scheduled) {
          scheduled = true;
          defer(start);
        }
      });
  };

  return {
    stats,
    request(member) {
      const queued = next.get(member);
      if (queued) return queued.promise;
      const w = waiter();
      next.set(member, w);
      if (!running && !scheduled) {
        scheduled = true;
        defer(start);
      }
      return w.promise;
    },
  };
}
