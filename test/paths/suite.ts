/**
 * The path suite: find every machine in `machines/`, generate its paths, run
 * each against the real machine, and measure what they covered. Shared by the
 * vitest suite and `npm run paths`, so both report the same numbers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AnyEventObject, AnyStateMachine } from 'xstate';
import { generatePaths, withoutPrefixes, type MachinePath } from './generate.js';
import { statesOf, transitionsOf } from './machine-graph.js';
import { fallbackModel, pathModels } from './models.js';
import type { PathModel } from './path-model.js';
import { runPath } from './run-path.js';

export interface MachineUnderTest {
  /** The file name's stem: `tool-call` for `machines/tool-call.machine.ts`. */
  name: string;
  machine: AnyStateMachine;
  model: PathModel;
  /** False when the machine has no model of its own in `models.ts`. */
  modelled: boolean;
}

export interface PathReport {
  name: string;
  problems: string[];
}

export interface MachineReport {
  machine: string;
  states: number;
  statesCovered: number;
  transitions: number;
  transitionsCovered: number;
  paths: number;
  uncoveredStates: string[];
  uncoveredTransitions: string[];
  failed: PathReport[];
}

const MACHINE_FILE = /^([a-z0-9-]+)\.machine\.(ts|js)$/;
const camel = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** `machines/` beside `test/`, in the source tree (vitest) or in `dist/` (the compiled report). */
export const machinesDir = fileURLToPath(new URL('../../machines/', import.meta.url));

/** Contract: every `<name>.machine.(ts|js)` in `dir`, sorted by name; throws if one does not export `<name>Machine`. */
export async function discoverMachines(dir = machinesDir): Promise<MachineUnderTest[]> {
  const files = fs.readdirSync(dir).filter((f) => MACHINE_FILE.test(f)).sort();
  const out: MachineUnderTest[] = [];
  for (const file of files) {
    const name = MACHINE_FILE.exec(file)![1]!;
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
    const machine = mod[`${camel(name)}Machine`] as AnyStateMachine | undefined;
    if (!machine) throw new Error(`${file} does not export ${camel(name)}Machine`);
    const model = pathModels[name];
    out.push({ name, machine, model: model ?? fallbackModel, modelled: model !== undefined });
  }
  return out;
}

function short(e: AnyEventObject): string {
  const { type, ...rest } = e;
  const done = /^xstate\.(done|error)\.actor\.(?:\d+\.[^.]+\.)?(.+)$/.exec(type);
  const head = done ? `${done[1]}(${done[2]})` : type;
  if (done?.[1] === 'error') return head;
  const payload = 'output' in rest ? rest.output : 'chunk' in rest ? rest.chunk : Object.keys(rest).length ? rest : undefined;
  const text = payload === undefined ? '' : JSON.stringify(payload).replace(/"/g, '');
  return text ? `${head} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}` : head;
}

/** A path's name: its world, if any, then its events, init left out. */
export const describePath = (p: MachinePath): string => {
  const world = machineOfPath.get(p)?.world;
  const events = p.steps.slice(1).map((s) => short(s.event)).join(' → ') || '(initial state)';
  return world ? `[${world}] ${events}` : events;
};

/** The machine each generated path belongs to: the machine itself, or its copy with one world's guards provided. */
const machineOfPath = new WeakMap<MachinePath, { machine: AnyStateMachine; world: string; model: PathModel }>();

const worldName = (w: Record<string, boolean>) =>
  Object.entries(w)
    .map(([g, v]) => (v ? g : `!${g}`))
    .join(' ');

/** The machine to run `p` against (with its world's guards). */
export const machineFor = (m: MachineUnderTest, p: MachinePath): AnyStateMachine => machineOfPath.get(p)?.machine ?? m.machine;

/**
 * Contract: the paths to run — generated in each of the model's worlds, then within a world the paths that are a
 * prefix of another dropped (the longer run passes through the same states).
 */
export function pathsOf(m: MachineUnderTest): MachinePath[] {
  const worlds = m.model.worlds ?? [undefined];
  const assigns = m.model.assigns ?? [undefined];
  const starts = [{ name: '', model: m.model }, ...(m.model.inputs ?? []).map((i) => ({ name: i.name, model: { ...m.model, input: i.input } }))];
  return starts.flatMap((start) =>
    assigns.flatMap((a) =>
      worlds.flatMap((w) => {
        const guards = w ? { guards: Object.fromEntries(Object.entries(w).map(([g, v]) => [g, () => v])) } : {};
        const machine = w || a ? m.machine.provide({ ...guards, ...(a ? { actions: a.actions } : {}) } as never) : m.machine;
        const paths = withoutPrefixes(generatePaths(machine, start.model));
        const world = [start.name, a?.name ?? '', w ? worldName(w) : ''].filter(Boolean).join(' ');
        for (const p of paths) machineOfPath.set(p, { machine, world, model: start.model });
        return paths;
      }),
    ),
  );
}

/** The model to run `p` with (its input, when the model has several). */
export const modelFor = (m: MachineUnderTest, p: MachinePath): PathModel => machineOfPath.get(p)?.model ?? m.model;

/** Runs every path of one machine (through `run`, which may hand back a result it already has) and measures coverage against the definition. */
export function runMachine(m: MachineUnderTest, paths = pathsOf(m), run = (p: MachinePath) => runPath(machineFor(m, p), modelFor(m, p), p)): MachineReport {
  const states = statesOf(m.machine);
  const transitions = transitionsOf(m.machine);
  const seenStates = new Set<string>();
  const seenTransitions = new Set<string>();
  const failed: PathReport[] = [];
  for (const p of paths) {
    const r = run(p);
    for (const s of r.coverage.states) seenStates.add(s);
    for (const t of r.coverage.transitions) seenTransitions.add(t);
    if (r.problems.length > 0) failed.push({ name: describePath(p), problems: r.problems });
  }
  const uncoveredStates = states.filter((s) => !seenStates.has(s));
  const uncoveredTransitions = transitions.filter((t) => !seenTransitions.has(t.key)).map((t) => t.label);
  return {
    machine: m.name,
    states: states.length,
    statesCovered: states.length - uncoveredStates.length,
    transitions: transitions.length,
    transitionsCovered: transitions.length - uncoveredTransitions.length,
    paths: paths.length,
    uncoveredStates,
    uncoveredTransitions,
    failed,
  };
}

/** The row `npm run paths -- --json` prints for a machine. */
export const rowOf = (r: MachineReport) => ({
  machine: r.machine,
  states: r.states,
  statesCovered: r.statesCovered,
  transitions: r.transitions,
  transitionsCovered: r.transitionsCovered,
  paths: r.paths,
});
