/**
 * What a machine definition contains, counted from the definition itself (not
 * from the paths): every nested state node and every transition candidate.
 * Coverage is measured against these lists, so a state or transition that no
 * generated path reaches shows up by name.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { getStateNodes } from 'xstate/graph';

export interface TransitionInfo {
  /** Stable within a machine: source node, event descriptor, position among that descriptor's candidates. */
  key: string;
  /** For people: `source -[event if guard]-> target`. */
  label: string;
}

const guardName = (t: AnyTransitionDefinition): string | undefined => {
  const g = t.guard as unknown;
  if (g === undefined) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name || 'inline guard';
  return String((g as { type?: unknown }).type ?? 'guard');
};

function candidates(t: AnyTransitionDefinition): readonly AnyTransitionDefinition[] {
  const node = t.source as AnyStateNode;
  return t.eventType === '' ? (node.always ?? []) : (node.transitions.get(t.eventType) ?? []);
}

/**
 * Contract: the same key for the same candidate on any instance of the
 * machine (`.provide()` builds new state nodes), and undefined for the
 * synthetic initial transition, which the definition does not list.
 */
export function transitionKey(t: AnyTransitionDefinition): string | undefined {
  const i = candidates(t).indexOf(t);
  if (i < 0) return undefined;
  return `${t.source.id}|${t.eventType === '' ? 'always' : t.eventType}|${i}`;
}

function label(t: AnyTransitionDefinition): string {
  const g = guardName(t);
  const targets = t.target?.map((n) => n.id).join(',') ?? `${t.source.id} (no target)`;
  return `${t.source.id} -[${t.eventType === '' ? 'always' : t.eventType}${g ? ` if ${g}` : ''}]-> ${targets}`;
}

/** Every state node below the root, by id (`tool-call.validating`, `session.running.active`). */
export function statesOf(machine: AnyStateMachine): string[] {
  return getStateNodes(machine.root).map((n) => n.id);
}

/**
 * Every transition candidate of the definition: each event descriptor's
 * guarded alternatives counted apart, eventless (`always`) candidates, and the
 * done/error transitions of every `invoke`. Targetless transitions count too
 * (their target is the source).
 */
export function transitionsOf(machine: AnyStateMachine): TransitionInfo[] {
  const out: TransitionInfo[] = [];
  for (const node of [machine.root, ...getStateNodes(machine.root)]) {
    const all = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of all) out.push({ key: transitionKey(t)!, label: label(t) });
  }
  return out;
}
