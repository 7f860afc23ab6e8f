/**
 * A memory store that commits only at a flush, as Postgres does (ADR 0103), and checks at every commit that each
 * child whose turn is committed is named by a committed entry of its parent: a delegation's `subagent/start`, a
 * Ralph run's `ralph/round` or `ralph/verify`.
 */
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import type { Entry } from '../../log/entries.js';
import type { OpenedLog, SessionStore } from '../../ports/store.js';

const names = (e: Entry, child: string) => (e.kind === 'subagent/start' || e.kind === 'ralph/round' || e.kind === 'ralph/verify') && 'child' in e && e.child === child;

/** A memory store whose lines are durable only once a flush returns; `broken`: commits that left a child's turn without its bracket. */
export function committingStore() {
  const inner = createMemorySessionStore();
  const durable = new Map<string, Entry[]>();
  const broken: string[] = [];
  const check = () => {
    for (const [id, entries] of durable) {
      if (!entries.some((e) => e.kind === 'turn/start')) continue;
      // A Ralph verifier's id extends its round's (`s.r2.verifier`), and the run's log names it: any log above it may.
      const above = [...durable.keys()].filter((p) => id.startsWith(`${p}.`));
      if (above.length === 0) continue;
      if (!above.some((p) => durable.get(p)!.some((e) => names(e, id)))) broken.push(`${id}: its turn is committed, the entry that names it in ${above.join(' or ')} is not`);
    }
  };
  const store: SessionStore = {
    ...inner,
    open(id, o) {
      const log = inner.open(id, o);
      let pending: Entry[] = [];
      const commit = () => {
        durable.set(id, [...(durable.get(id) ?? []), ...pending]);
        pending = [];
        check();
      };
      const opened: OpenedLog = {
        location: log.location,
        ...(log.lock ? { lock: log.lock } : {}),
        append(entry, line) {
          log.append(entry, line);
          pending.push(entry);
        },
        async flush() {
          await log.flush();
          commit();
        },
        async close() {
          commit();
          await log.close();
        },
      };
      return opened;
    },
  };
  return { store, broken, durable };
}
