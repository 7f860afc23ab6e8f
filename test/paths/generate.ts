/**
 * Path generation with `xstate/graph`. The traversal runs the machine's pure
 * transition function (no actions executed, no actors started) and needs
 * every event it may try: passing `events` replaces xstate's own discovery,
 * so `eventsFor` rebuilds it — every descriptor the active states listen to,
 * invoke done/error events with the model's scripted outputs, payload
 * variants — and the model fills what only it knows (wildcards).
 */
import { LogNotDurableError } from '../../log/errors.js';
import { createEmptyActor, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode } from 'xstate';
import { getShortestPaths, getSimplePaths, type StatePath } from 'xstate/graph';
import type { PathModel } from './path-model.js';

export type MachinePath = StatePath<AnyMachineSnapshot, AnyEventObject>;

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';

function invokeSrc(snapshot: AnyMachineSnapshot, id: string): string | undefined {
  for (const node of snapshot._nodes as AnyStateNode[]) {
    const inv = node.invoke.find((i) => i.id === id);
    if (inv) return typeof inv.src === 'string' ? inv.src : (inv.src as { id?: string }).id;
  }
  return undefined;
}

/** Contract: every event the active states have a transition for, in a stable order; wildcard descriptors only as the model spells them out. */
export function eventsFor(snapshot: AnyMachineSnapshot, model: PathModel): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const types = new Set<string>();
  for (const node of snapshot._nodes as AnyStateNode[]) for (const type of node.transitions.keys()) types.add(type);
  const out: AnyEventObject[] = [];
  for (const type of types) {
    const own = model.events?.(snapshot, type);
    if (own) {
      out.push(...own);
    } else if (type.startsWith(DONE) && !type.endsWith('*')) {
      const src = invokeSrc(snapshot, type.slice(DONE.length));
      for (const output of (src && model.outputs?.[src]) || [undefined]) out.push({ type, output });
    } else if (type.startsWith(ERROR) && !type.endsWith('*')) {
      const src = invokeSrc(snapshot, type.slice(ERROR.length)) ?? 'actor';
      // A flush fails as the recorder's does: a LogNotDurableError, which the machine notes in the log (ADR 0017).
      out.push({ type, error: src === 'flushLog' ? new LogNotDurableError(3, 'EIO: i/o error, fdatasync (scripted)', 'EIO') : new Error(`${src} failed (scripted)`) });
    } else if (!type.includes('*')) {
      out.push(...(model.payloads?.[type] ?? [{ type }]));
    }
  }
  return out;
}

/** The abstract state: the state value plus what the model says matters of the context. */
export function abstractKey(snapshot: AnyMachineSnapshot, model: PathModel): string {
  return JSON.stringify([snapshot.status, snapshot.value, model.abstract?.(snapshot) ?? null]);
}

/**
 * The traversal runs transitions in a mock actor scope with no parent, where
 * resolving `sendParent` throws; the actions themselves never run there. This
 * view of the machine gives that scope a stand-in parent and changes nothing else.
 */
function withStandInParent(machine: AnyStateMachine): AnyStateMachine {
  const parent = createEmptyActor();
  const view = Object.create(machine) as AnyStateMachine;
  const adopt = (scope: { self: { _parent?: unknown } }) => {
    scope.self._parent ??= parent;
    return scope;
  };
  view.transition = (s, e, scope) => machine.transition(s, e, adopt(scope as never) as never);
  view.getInitialSnapshot = (scope, input) => machine.getInitialSnapshot(adopt(scope as never) as never, input);
  return view;
}

const eventKey = (e: AnyEventObject | undefined) => (e ? JSON.stringify(e) : 'init');

/**
 * Contract: finite for a model whose `abstract` is finite; throws (xstate's
 * "Traversal limit exceeded") rather than truncating when it is not.
 */
export function generatePaths(machine: AnyStateMachine, model: PathModel, limit = 200_000): MachinePath[] {
  const events = (s: AnyMachineSnapshot) => eventsFor(s, model);
  const logic = withStandInParent(machine);
  if (model.generator === 'simple') {
    return getSimplePaths(logic, { input: model.input, events, limit, serializeState: (s) => abstractKey(s, model) }) as MachinePath[];
  }
  // The key names the incoming edge too, so "a shortest path to every vertex" is "a path through every edge".
  const serializeState = (s: AnyMachineSnapshot, e: AnyEventObject | undefined, prev: AnyMachineSnapshot | undefined) =>
    `${abstractKey(s, model)}<-${prev ? abstractKey(prev, model) : ''}:${eventKey(e)}`;
  return getShortestPaths(logic, { input: model.input, events, limit, serializeState }) as MachinePath[];
}

/** Drops every path whose events are a prefix of another path's: the longer run passes through the same states. */
export function withoutPrefixes(paths: readonly MachinePath[]): MachinePath[] {
  const seqs = paths.map((p) => ({ p, keys: p.steps.slice(1).map((s) => eventKey(s.event)) }));
  seqs.sort((a, b) => b.keys.length - a.keys.length);
  const kept: typeof seqs = [];
  const prefixes = new Set<string>();
  for (const s of seqs) {
    const whole = s.keys.join('\n');
    if (prefixes.has(whole)) continue;
    kept.push(s);
    for (let i = 0; i <= s.keys.length; i++) prefixes.add(s.keys.slice(0, i).join('\n'));
  }
  return kept.map((s) => s.p);
}
