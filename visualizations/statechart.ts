/**
 * A machine as a plain chart: its states (nested), their descriptions,
 * invoked actors and entry effects, and its transitions with readable labels. Both the Mermaid
 * and the DOT writers read this, so the two diagrams always agree.
 */
import type { AnyStateMachine } from 'xstate';

export interface ChartState {
  /** The state node's id, e.g. `session.running.active`; unique in the machine. */
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  description?: string;
  /** The id of the initial child, for compound states. */
  initial?: string;
  /** Named actors this state invokes. */
  invokes: string[];
  /**
   * The host-provided effect actions its entry runs (synchronous phases such as `prepareRequest`, which answer
   * with an event), so they show in the diagram as invoked actors do. `record` is everywhere and left out.
   */
  runs: string[];
  children: ChartState[];
}

export interface ChartEdge {
  source: string;
  /** Equal to `source` for a transition that only runs actions. */
  target: string;
  label: string;
}

export interface Chart {
  id: string;
  root: ChartState;
  edges: ChartEdge[];
  /** Labels of transitions the machine takes in every state (declared on the root). */
  everywhere: string[];
}

interface NodeLike {
  id: string;
  key: string;
  type: ChartState['type'];
  description?: string;
  states: Record<string, NodeLike>;
  initial?: { target: readonly NodeLike[] };
  invoke: readonly { id: string; src: unknown }[];
  entry: readonly unknown[];
  machine: { implementations: { actions: Record<string, unknown> } };
  transitions: Map<string, readonly TransitionLike[]>;
  always?: readonly TransitionLike[];
  after?: readonly TransitionLike[];
}

interface TransitionLike {
  eventType: string;
  target?: readonly NodeLike[];
  guard?: unknown;
}

const guardName = (g: unknown): string | undefined => {
  if (g === undefined || g === null) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name || 'guard';
  if (typeof g === 'object' && 'type' in g && typeof (g as { type: unknown }).type === 'string') return (g as { type: string }).type;
  return 'guard';
};

/** Invoke done/error events carry generated ids; name them after the invoked actor instead. */
function eventLabel(node: NodeLike, eventType: string): string {
  if (eventType === '') return 'always';
  for (const inv of node.invoke) {
    const src = typeof inv.src === 'string' ? inv.src : inv.id;
    if (eventType === `xstate.done.actor.${inv.id}`) return `done ${src}`;
    if (eventType === `xstate.error.actor.${inv.id}`) return `error ${src}`;
  }
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  return eventType;
}

function edgesOf(node: NodeLike): ChartEdge[] {
  const out: ChartEdge[] = [];
  const add = (t: TransitionLike, eventType: string) => {
    const guard = guardName(t.guard);
    const label = eventLabel(node, eventType) + (guard ? ` [${guard}]` : '');
    const targets = t.target && t.target.length > 0 ? t.target : [node];
    for (const target of targets) out.push({ source: node.id, target: target.id, label });
  };
  for (const [eventType, ts] of node.transitions) for (const t of ts) add(t, eventType);
  for (const t of node.always ?? []) add(t, '');
  return out;
}

/** An effect action: a plain function the host provides; built-ins (`assign`, `sendTo`, `enqueueActions`…) carry `resolve`. */
function effectsOf(node: NodeLike): string[] {
  const impl = node.machine.implementations.actions;
  const names = node.entry.map((a) => (typeof a === 'string' ? a : typeof a === 'object' && a !== null && 'type' in a ? String((a as { type: unknown }).type) : ''));
  return names.filter((n) => n !== '' && n !== 'record' && typeof impl[n] === 'function' && !('resolve' in (impl[n] as object)));
}

function walk(node: NodeLike, edges: ChartEdge[]): ChartState {
  const children = Object.values(node.states).map((c) => walk(c, edges));
  for (const c of Object.values(node.states)) edges.push(...edgesOf(c));
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    ...(node.description ? { description: node.description } : {}),
    ...(node.initial?.target[0] ? { initial: node.initial.target[0].id } : {}),
    invokes: node.invoke.map((i) => (typeof i.src === 'string' ? i.src : i.id)),
    runs: effectsOf(node),
    children,
  };
}

/** Contract: pure and deterministic (declaration order); the machine is only read. */
export function toChart(machine: AnyStateMachine): Chart {
  const root = machine.root as unknown as NodeLike;
  const edges: ChartEdge[] = [];
  const chart = walk(root, edges);
  const seen = new Set<string>();
  const unique = edges.filter((e) => {
    const k = `${e.source}\u0000${e.target}\u0000${e.label}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
  const keyOf = (id: string) => id.slice(id.lastIndexOf('.') + 1);
  const everywhere = [...new Set(edgesOf(root).map((e) => (e.target === root.id ? e.label : `${e.label} → ${keyOf(e.target)}`)))];
  return { id: machine.id, root: chart, edges: unique, everywhere };
}

/** Every state of the chart, depth first, root excluded. */
export function allStates(chart: Chart): ChartState[] {
  const out: ChartState[] = [];
  const visit = (s: ChartState) => {
    for (const c of s.children) {
      out.push(c);
      visit(c);
    }
  };
  visit(chart.root);
  return out;
}

/**
 * The state node ids a state value makes active, e.g. `{ running: 'active' }`
 * in machine `session` → `session.running`, `session.running.active`.
 * Contract: pure. The viewer does the same in the browser (viewer.js).
 */
export function activeIds(machineId: string, value: unknown): string[] {
  const out: string[] = [];
  const visit = (prefix: string, v: unknown) => {
    if (typeof v === 'string') out.push(`${prefix}.${v}`);
    else if (v && typeof v === 'object')
      for (const [k, sub] of Object.entries(v)) {
        out.push(`${prefix}.${k}`);
        visit(`${prefix}.${k}`, sub);
      }
  };
  visit(machineId, value);
  return out;
}
