/**
 * Admission of input (ADR 0021): an input is logged, then handed to the
 * session in the same tick, so the log's order is the order the session
 * admits; a session going on from its log is handed, once and in log order,
 * the turn it left waiting and every input no turn took. Input waits while
 * plugins still start (an MCP server connecting) or replay's gate holds it.
 */
import type { Actor } from 'xstate';
import type { Origin } from '../../log/entry-values.js';
import { LogNotDurableError } from '../../log/errors.js';
import { pendingInputs } from '../../log/inputs.js';
import { draftNotDurable } from '../../log/not-durable.js';
import type { Recorder } from '../../log/recorder.js';
import type { ResumableTurn } from '../../log/resumable.js';
import type { InputMode } from '../../log/entries-inputs.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { Host } from '../../plugins/host.js';
import { SessionClosedError } from '../bridle-session.js';
import { SessionNotStartedError, type Lifecycle } from './lifecycle.js';

/** The event that admits a logged input (`session/input` at `seq`). */
const admitted = (seq: number, text: string, mode: InputMode, origin: Origin) =>
  ({ type: 'session.input.received', seq, text, mode, ...(origin !== 'user' ? { origin } : {}) }) as const;

export interface Admission {
  /** Opens the gates (called by `start`) and hands over what the log left queued. */
  open(queued: { resumed?: ResumableTurn; fromLog: boolean }): void;
  /** Resolves once started and every gate opened. Contract: never rejects. */
  readonly ready: Promise<void>;
  /** Started, and a gate still holds input back. */
  readonly held: boolean;
  /** Runs `f` now, or once the gates opened; rejects `SessionNotStartedError` before `start`. */
  afterStart<T>(f: () => T | Promise<T>): Promise<T>;
  /** Logs the input and hands it over at once; returns its seq. Throws when the session crashed, closes, or is not started. */
  admit(text: string, mode: InputMode, origin?: Origin): number;
  /** The input's save; one that fails is noted in the log (`log/not-durable`), as a machine notes its own (ADR 0017). */
  saveInput(seq: number): Promise<void>;
  /** Waits for the gates, then logs and hands over the input; resolves with its seq once durable. */
  send(text: string, mode?: InputMode, origin?: Origin): Promise<number>;
}

export function admission(o: { actor: Actor<typeof sessionMachine>; recorder: Recorder; host: Host; startGate?: Promise<void>; life: Lifecycle }): Admission {
  const { actor, recorder, life } = o;
  let held = true;
  let begin!: (gates: Promise<unknown>[]) => void;
  const begun = new Promise<Promise<unknown>[]>((resolve) => (begin = resolve));
  const ready = begun.then((gates) => Promise.all(gates)).then(() => void (held = false));
  const afterStart = <T>(f: () => T | Promise<T>): Promise<T> => {
    if (!life.started) return Promise.reject(new SessionNotStartedError());
    return held ? ready.then(f) : Promise.resolve(f());
  };
  const admit = (text: string, mode: InputMode, origin: Origin = 'user'): number => {
    if (life.crashed) throw life.crashed;
    if (life.closing) throw new SessionClosedError();
    if (!life.started) throw new SessionNotStartedError();
    const e = recorder.append({ kind: 'session/input', mode, text, origin });
    // A session being ended starts nothing more: the input stays queued in the log, for a resume.
    if (!life.ending) actor.send(admitted(e.seq, text, mode, origin));
    return e.seq;
  };
  const saveInput = async (seq: number): Promise<void> => {
    try {
      await recorder.flush();
    } catch (err) {
      const note = err instanceof LogNotDurableError ? { ...draftNotDurable(err), input: seq } : undefined;
      try {
        if (note) recorder.append(note);
      } catch {}
      throw err;
    }
  };
  return {
    ready,
    get held() {
      return life.started && held;
    },
    afterStart,
    admit,
    saveInput,
    open: ({ resumed, fromLog }) => {
      // Plugins still starting hold input back, in order, so the first request's tools do not depend on how fast a
      // server answered; so does replay's gate, until the log says the opening is done. Without either, input goes
      // straight in — logged and admitted in the same tick.
      const gates = [...(o.host.starting() ? [o.host.ready().catch(() => undefined)] : []), ...(o.startGate ? [o.startGate] : [])];
      held = gates.length > 0;
      begin(gates);
      if (!fromLog) return;
      void afterStart(() => {
        if (resumed?.budget) {
          // A turn its host left waiting on a spent budget's question asks it again (ADR 0047).
          actor.send({ type: 'session.turn.resumed', seq: resumed.from ?? 0, text: resumed.input, ...(resumed.origin ? { origin: resumed.origin } : {}), resumeBudget: { steps: resumed.steps } });
        } else if (resumed) {
          const { from, input, origin, steps, blocks, finish, settled, decided } = resumed;
          // A call the log holds the answer of goes on with that answer, not asked again (ADR 0031).
          const answered = decided.length > 0 ? { answered: Object.fromEntries(decided.map((d) => [d.callId, d.answer])) } : {};
          actor.send({ type: 'session.turn.resumed', seq: from ?? 0, text: input, ...(origin ? { origin } : {}), resume: { steps, step: { blocks, finish, settled, ...answered } } });
        }
        for (const e of pendingInputs(recorder.entries)) actor.send(admitted(e.seq, e.text, e.mode, e.origin));
      });
    },
    send: async (text, mode = 'followup', origin) => {
      if (life.started && held) await ready;
      const seq = admit(text, mode, origin);
      await saveInput(seq);
      return seq;
    },
  };
}
