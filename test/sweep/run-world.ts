/**
 * Runs one seeded world through a whole session (`createHarness`: memory
 * store, stepping clock, every request recorded) until it is idle with
 * nothing queued, firing the world's inputs and cancels when the log reaches
 * their length, a random number (at least one) of microtasks later. At least
 * one, because the entry listener runs inside the machine's `record` action,
 * and a host that sends to the session from there re-enters xstate
 * mid-action (xstate warns "Custom actions should not call sendTo()").
 */
import { createMemoryStore, type MemorySessionStore, type MemoryStore } from '../../adapters/store/memory.js';
import type { ModelProvider } from '../../ports/model.js';
import type { Plugin } from '../../plugins/host.js';
import type { PatchEntry } from '../../plugins/rows.js';
import { createHarness, type Harness, type HarnessOptions } from '../helpers/harness.js';
import { wireModel, type Wire } from '../helpers/wire-fake.js';
import { sweepModel, type SweepModel } from './model.js';
import { sweepTools, type ToolLedger } from './tools.js';
import { ANSWER_TIMEOUT_MS, makeWorld, sweepAnswerer, type Trigger, type World } from './world.js';

export interface WorldRun {
  world: World;
  h: Harness;
  /** The store the session wrote (the harness's own unless the world's flushes fail). */
  store: MemoryStore;
  model: SweepModel;
  ledger: ToolLedger;
  /** False when the session did not come to rest within the time limit. */
  settled: boolean;
  /** The provider whose wire the model's answers went through (`wire-fake.ts`); unset, the sweep model was the session's model. */
  wire?: Wire;
  /** Through a wire: the request each of `model.replies` answered (without one, reply i answered request i). */
  requestOfReply?: number[];
  /** Every input the session acknowledged (its `send` resolved), by the seq it answered, and every one whose save it said failed. */
  acked: { seq: number; text: string; mode: string }[];
  refusedInputs: { text: string; error: string }[];
}

const SETTLE_MS = 5_000;
const tick = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a delegation world adds to a session: the model that delegates, the plugins and rows of its providers, a store of every log. */
export interface Delegating {
  model: ModelProvider;
  plugins: Plugin<any>[];
  patch: PatchEntry[];
  settings: NonNullable<HarnessOptions['settings']>;
  sessions: MemorySessionStore;
}

/** Contract: resolves (never rejects) once the session is idle with nothing queued and no trigger in flight, or after the time limit. */
export async function runWorld(seed: number, delegating?: (model: SweepModel) => Delegating, wire?: Wire): Promise<WorldRun> {
  const world = makeWorld(seed);
  const ledger: ToolLedger = { started: [] };
  const model = sweepModel(seed);
  const d = delegating?.(model);
  // Through a wire, the session's model is the real provider; the sweep model answers behind its fake of the wire. A
  // cancel can land before the SDK has sent a request on, so which request each reply answered is noted.
  const requestOfReply: number[] = [];
  const behind: ModelProvider = {
    ...model,
    stream(request, signal) {
      const at = h.requests.length - 1;
      const inner = model.stream(request, signal)[Symbol.asyncIterator]();
      return (async function* () {
        for (let first = true; ; first = false) {
          const next = inner.next();
          // The sweep model notes its reply synchronously, on the first `next`.
          if (first) while (requestOfReply.length < model.replies.length) requestOfReply.push(at);
          const r = await next;
          if (r.done) return;
          yield r.value;
        }
      })();
    },
  };
  const session = wire ? wireModel(wire, behind).model : model;
  // A delegation world keeps every log in one store of sessions (its flushes never fail: the children's logs are the point there).
  const store = world.flushFault && !d ? failingFlushes(world.flushFault) : undefined;
  const h = createHarness(d?.model ?? session, {
    ...(store ? { store } : {}),
    ...(d ? { plugins: d.plugins, patch: d.patch, settings: d.settings, services: { store: d.sessions } } : {}),
    tools: sweepTools(ledger),
    approval: world.policy,
    answerer: sweepAnswerer(seed),
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    maxSteps: world.maxSteps,
    retry: world.retry,
    ...(world.contextWindow !== undefined ? { contextWindow: world.contextWindow } : {}),
  });
  let live = true;
  let inFlight = 0;
  const acked: WorldRun['acked'] = [];
  const refusedInputs: WorldRun['refusedInputs'] = [];
  // An input is received once its send resolves (ADR 0021); one whose save failed says so.
  const send = (text: string, mode: 'followup' | 'steer' | 'inject') => {
    inFlight++;
    h.session.send(text, mode).then(
      (seq) => (inFlight--, acked.push({ seq, text, mode })),
      (err: unknown) => (inFlight--, refusedInputs.push({ text, error: String(err) })),
    );
  };
  const fire = (t: Trigger) => {
    if (!live) return;
    if (t.kind === 'cancel') void h.session.cancel('sweep');
    else if (t.kind === 'compact') void h.session.compact('sweep');
    else send(t.text, t.mode);
  };
  const hop = (n: number, f: () => void) => {
    inFlight++;
    const step = (left: number) => (left === 0 ? (inFlight--, f()) : queueMicrotask(() => step(left - 1)));
    step(n);
  };
  const waiting = [...world.triggers];
  const off = h.session.recorder.onEntry(() => {
    const n = h.session.recorder.entries.length;
    for (const t of waiting.filter((x) => x.atEntry <= n)) {
      waiting.splice(waiting.indexOf(t), 1);
      hop(t.hops, () => fire(t));
    }
  });

  send(world.first, 'followup');
  const deadline = Date.now() + SETTLE_MS;
  let settled = false;
  while (!settled && Date.now() < deadline) {
    const idle = await Promise.race([h.session.idle().then(() => true), tick(deadline - Date.now()).then(() => false)]);
    if (!idle) break;
    // Let hops, timers and a wake that may follow the checkpoint run, then look again.
    await tick(1);
    const s = h.session.actor.getSnapshot();
    settled = inFlight === 0 && s.value === 'idle' && s.context.followups.length === 0;
  }
  live = false;
  off();
  return { world, h, store: store ?? d?.sessions.get('test-session') ?? h.store, model, ...(wire ? { wire, requestOfReply } : {}), ledger, settled, acked, refusedInputs };
}

/** A memory store that must be flushed, whose flush fails (EIO) at its `at`-th call, and on every later one when `sticky`. */
function failingFlushes(f: { at: number; sticky: boolean }): MemoryStore {
  const inner = createMemoryStore();
  let n = 0;
  return {
    ...inner,
    flush: async () => {
      n++;
      if (n === f.at || (f.sticky && n > f.at)) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    },
  };
}
