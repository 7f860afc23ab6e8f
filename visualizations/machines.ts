/**
 * Every machine in `machines/*.machine.ts`, found by looking, not by a list:
 * a new machine file gets its diagram without anyone editing this. Each is
 * named after its file (`tool-call.machine.ts` → `tool-call`); the four core
 * machines come first, in the order of the actor tree.
 */
import { readdirSync } from 'node:fs';
import type { AnyStateMachine } from 'xstate';

export interface NamedMachine {
  name: string;
  /** The source file, relative to the repo root, for the diagram's header. */
  source: string;
  machine: AnyStateMachine;
}

const CORE = ['session', 'turn', 'step', 'tool-call'];

const isMachine = (v: unknown): v is AnyStateMachine =>
  typeof v === 'object' && v !== null && 'root' in v && 'config' in v && typeof (v as { transition?: unknown }).transition === 'function';

/** Contract: resolves with one entry per machine file (its first exported machine), core machines first, then by name. */
export async function discoverMachines(dir: URL = new URL('../machines/', import.meta.url)): Promise<NamedMachine[]> {
  const files = readdirSync(dir).filter((f) => /\.machine\.(js|ts)$/.test(f) && !f.endsWith('.d.ts'));
  const found: NamedMachine[] = [];
  for (const file of files) {
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    const machine = Object.values(mod).find(isMachine);
    if (!machine) continue;
    const name = file.replace(/\.machine\.(js|ts)$/, '');
    found.push({ name, source: `machines/${name}.machine.ts`, machine });
  }
  const rank = (n: string) => (CORE.includes(n) ? CORE.indexOf(n) : CORE.length);
  return found.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}
