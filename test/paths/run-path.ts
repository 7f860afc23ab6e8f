/**
 * Runs one generated path against the real machine.
 *
 * How: the machine is created as a real actor with every actor slot replaced
 * by a fake child that records what it is sent and never settles by itself;
 * the path's events — including the done/error events of invoked actors that
 * the graph generated — are then delivered with `send`. So guards, actions,
 * spawns, `sendTo`/`sendParent` and `record` all run for real, and the only
 * thing scripted is what the outside world answers, exactly as the path says
 * (effect actions such as `prepareRequest` are noted, and their answers are
 * path events; guards that read the world are fixed by the path's world).
 * (The pure `transition()` API would run no actions, so no drafts and no
 * children to check.) A probe actor stands in as the parent, so `sendParent`
 * has somewhere to go, and its system's `inspect` hook sees every microstep:
 * that is where coverage is measured — the transitions actually taken and the
 * states actually entered, transient ones included.
 */
import { createActor, fromCallback, type AnyActorRef, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode, type InspectionEvent } from 'xstate';
import type { Draft } from '../../log/entries.js';
import { abstractKey, type MachinePath } from './generate.js';
import { transitionKey } from './machine-graph.js';
import type { FakeChild, PathModel, PathRun } from './path-model.js';

export interface Coverage {
  states: Set<string>;
  transitions: Set<string>;
}

export interface PathResult {
  run: PathRun;
  /** The real machine disagreed with the graph or crashed, or an invariant failed; empty when the path passes. */
  problems: string[];
  coverage: Coverage;
}

/** The run in progress: fakes and `record` write to it. Paths run one at a time, synchronously. */
interface Holder {
  run?: PathRun;
}

function fake(src: string, holder: Holder) {
  return fromCallback<AnyEventObject, unknown>(({ input, receive, self }) => {
    const run = holder.run!;
    const child: FakeChild = { src, id: self.id, input, born: run.sent.length, received: [] };
    run.children.push(child);
    receive((event) => child.received.push({ event, at: run.sent.length }));
  });
}

const provided = new WeakMap<AnyStateMachine, { machine: AnyStateMachine; holder: Holder }>();

/** An effect action: a plain function in an action slot, which only the host can fill (built-ins such as `assign` carry `resolve`). */
const isEffect = (name: string, impl: unknown) => name !== 'record' && typeof impl === 'function' && !('resolve' in impl);

/**
 * The machine with every actor slot faked, `record` collecting drafts and every other effect action (the
 * synchronous phases, e.g. `prepareRequest`) noted in `effects`; their answers come from the path as events.
 * Built once per machine (building one is not cheap).
 */
function withFakes(machine: AnyStateMachine): { machine: AnyStateMachine; holder: Holder } {
  let entry = provided.get(machine);
  if (!entry) {
    const holder: Holder = {};
    const slots = Object.keys(machine.implementations.actors ?? {});
    const effects = Object.entries(machine.implementations.actions ?? {}).filter(([name, impl]) => isEffect(name, impl));
    const note = (action: string) => (_: unknown, params: unknown) => {
      const run = holder.run!;
      run.effects.push({ action, params, at: run.sent.length, afterDrafts: run.drafts.length });
    };
    const m = machine.provide({
      actors: Object.fromEntries(slots.map((s) => [s, fake(s, holder)])),
      actions: {
        ...Object.fromEntries(effects.map(([name]) => [name, note(name)])),
        record: (_: unknown, draft: Draft) => void holder.run!.drafts.push({ draft, at: holder.run!.sent.length }),
      },
    } as never) as AnyStateMachine;
    entry = { machine: m, holder };
    provided.set(machine, entry);
  }
  return entry;
}

function noteStates(snapshot: AnyMachineSnapshot, into: Set<string>, rootId: string): void {
  for (const n of (snapshot._nodes ?? []) as AnyStateNode[]) if (n.id !== rootId) into.add(n.id);
}

/** Contract: never throws for a machine failure or a broken invariant; both come back in `problems`. */
export function runPath(machine: AnyStateMachine, model: PathModel, path: MachinePath): PathResult {
  const run: PathRun = { input: model.input, sent: [], before: [], drafts: [], children: [], effects: [], toParent: [], final: undefined as unknown as AnyMachineSnapshot, done: false };
  const coverage: Coverage = { states: new Set(), transitions: new Set() };
  const mismatches: string[] = [];
  const { machine: faked, holder } = withFakes(machine);
  holder.run = run;
  const rootId = faked.root.id;

  let subject: AnyActorRef | undefined;
  const inspect = (e: InspectionEvent) => {
    // Before `createActor` returns, its initial macrostep (a transient initial state's transitions) is already being inspected.
    if (subject === undefined ? parentRef === undefined || e.actorRef === parentRef : e.actorRef !== subject) return;
    if (e.type === '@xstate.microstep') {
      noteStates(e.snapshot as AnyMachineSnapshot, coverage.states, rootId);
      for (const t of e._transitions) {
        const key = transitionKey(t);
        if (key) coverage.transitions.add(key);
        // A state a transition leaves was active, even a transient initial one no snapshot ever shows.
        if (t.source.id !== rootId) coverage.states.add(t.source.id);
      }
    } else if (e.type === '@xstate.snapshot') {
      noteStates(e.snapshot as AnyMachineSnapshot, coverage.states, rootId);
    }
  };
  let parentRef: AnyActorRef | undefined;
  const parent = createActor(
    fromCallback<AnyEventObject>(({ receive }) => receive((event) => run.toParent.push({ event, at: run.sent.length }))),
    { inspect },
  );
  parentRef = parent;
  parent.start();
  const actor = createActor(faked, { parent, input: model.input } as never);
  subject = actor;
  actor.subscribe({ error: (err) => mismatches.push(`the machine crashed: ${String(err)}`) });
  actor.start();

  const compare = (i: number, expected: AnyMachineSnapshot) => {
    const actual = actor.getSnapshot() as AnyMachineSnapshot;
    const want = abstractKey(expected, model);
    const got = abstractKey(actual, model);
    if (want !== got) mismatches.push(`after event ${i} (${path.steps[i]?.event.type}): the graph expected ${want}, the machine is in ${got}`);
  };
  compare(0, path.steps[0]!.state);
  for (let i = 1; i < path.steps.length && mismatches.length === 0; i++) {
    const step = path.steps[i]!;
    model.beforeSend?.(run, step.event);
    run.before.push(actor.getSnapshot() as AnyMachineSnapshot);
    run.sent.push(step.event);
    actor.send(step.event);
    compare(i, step.state);
  }
  run.final = actor.getSnapshot() as AnyMachineSnapshot;
  run.done = run.final.status === 'done';
  subject = undefined;
  const problems = [...mismatches];
  if (mismatches.length === 0) {
    problems.push(...model.check(run));
    if (model.afterPath) problems.push(...model.afterPath((event) => (actor.send(event), actor.getSnapshot() as AnyMachineSnapshot), run));
  }
  // A child of the probe cannot be stopped directly; its fakes hold no timers or handles, so nothing is left running.
  parent.stop();
  return { run, problems, coverage };
}
