/**
 * The states of a machine read from its definition (`machine.root`), as
 * dotted paths below the root: `executing`, `running.active`. The soak's
 * generated kill points (ADR 0043) come from here, so a state added to a
 * machine gets a kill point without anyone listing it.
 */
import type { AnyStateMachine, StateValue } from 'xstate';

interface Node {
  key: string;
  states: Record<string, Node>;
  initial?: { target: readonly Node[] } | undefined;
}

/** Contract: pure; every state node of `machine` but its root, parents before children, in definition order. */
export function statePaths(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const walk = (node: Node, prefix: string) => {
    for (const [key, child] of Object.entries(node.states)) {
      const path = prefix ? `${prefix}.${key}` : key;
      out.push(path);
      walk(child, path);
    }
  };
  walk(machine.root as unknown as Node, '');
  return out;
}

/** Contract: pure; the paths of the states a machine starts in (its initial state, and the initial states below it). */
export function initialPaths(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const walk = (node: Node, prefix: string) => {
    for (const child of node.initial?.target ?? []) {
      const path = prefix ? `${prefix}.${child.key}` : child.key;
      out.push(path);
      walk(child, path);
    }
  };
  walk(machine.root as unknown as Node, '');
  return out;
}

/** Contract: pure; the paths of every state a state value names as active (each one and its ancestors). */
export function activePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  return Object.entries(value).flatMap(([key, sub]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return sub === undefined ? [path] : [path, ...activePaths(sub, path)];
  });
}
