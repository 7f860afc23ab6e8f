/**
 * The machines running in a session right now: the session actor and every
 * machine actor under it (turn, step, tool calls), read from
 * `getSnapshot().children`. Promise and callback actors have no state value
 * and are left out.
 */
import type { AnyActorRef } from 'xstate';
import type { ActorState } from './protocol.js';

interface MachineLike {
  getSnapshot(): { value?: unknown; status?: string; children?: Record<string, AnyActorRef | undefined> };
  id: string;
  logic?: { id?: unknown };
}

/** Contract: pure read of the actors' current snapshots; parents come before their children. */
export function actorTree(root: AnyActorRef): ActorState[] {
  const out: ActorState[] = [];
  const visit = (ref: MachineLike, parent: string | null, depth: number) => {
    const snap = ref.getSnapshot();
    if (!snap || snap.value === undefined) return;
    const machine = typeof ref.logic?.id === 'string' ? ref.logic.id : ref.id;
    out.push({ id: parent === null ? machine : ref.id, machine, value: snap.value, status: String(snap.status ?? 'active'), parent });
    // Deep trees are a bug elsewhere; stop rather than recurse without end.
    if (depth > 16) return;
    const self = parent === null ? machine : ref.id;
    for (const child of Object.values(snap.children ?? {})) if (child) visit(child as unknown as MachineLike, self, depth + 1);
  };
  visit(root as unknown as MachineLike, null, 0);
  return out;
}
