/**
 * A session this worker runs, as the relay port's owner duties see it (`OwnedSession`, ports/relay.ts): how a
 * request another worker forwarded is applied — as this worker's own attached client's would be. An input is
 * logged as the session's input; an approval answer goes to the desk the attached clients answer at (refused
 * `NOT_PENDING` as theirs would be); a cancel or compaction is asked of the session as `session/cancel` asks it.
 */
import type { OpenedLog } from '../ports/store.js';
import { isEffectOf, type Forwardable, type OwnedSession, type RelayRefusal } from '../ports/relay.js';
import type { HostedSession } from './hosted-session.js';
import { ErrorCode, Reason } from './protocol.js';

/** How often, and how many times, an answer to a question the log shows open and the desk does not hold yet is tried again. */
const DESK_WAIT_MS = 10;
const DESK_WAIT_TRIES = 100;

/** How long to wait for the entry an applied request logs (an approval's decision, a cancel) before settling it as logging nothing. */
const EFFECT_WAIT_MS = 5000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function ownedSession(hosted: HostedSession): OwnedSession {
  const session = hosted.bridle;
  const rec = session.recorder;
  const id = session.id;
  const log = rec.store as OpenedLog;
  /** Whether the log shows the call asked and neither decided nor left behind by its turn's end. */
  const openInLog = (callId: string): boolean => {
    const entries = rec.entries;
    const asked = entries.findLastIndex((e) => e.kind === 'approval/asked' && e.callId === callId);
    return asked >= 0 && !entries.slice(asked + 1).some((e) => (e.kind === 'approval/decided' && e.callId === callId) || e.kind === 'turn/end');
  };
  const apply = async (f: Forwardable): Promise<number | RelayRefusal> => {
    if (f.kind === 'input') return session.send(f.text, f.mode);
    let off = () => undefined as void;
    const logged = new Promise<number>((resolve) => {
      off = rec.onEntry((e) => isEffectOf(f, e) && resolve(e.seq));
    });
    try {
      let done: Promise<unknown>;
      if (f.kind === 'approval') {
        // The client answered on the worker it is attached to there (that worker checked it): answered as an attached client here.
        if (!f.attached) return { code: ErrorCode.NotAttached, reason: Reason.NOT_ATTACHED, message: `attach to session ${JSON.stringify(id)} (session/attach) before answering its approvals` };
        // The question is durable before the desk holds it (the desk flushes, then waits): an answer that outran it waits a little.
        for (let i = 0; !hosted.desk.respond(f.callId, f.outcome, f.by); i++) {
          if (i >= DESK_WAIT_TRIES || !openInLog(f.callId)) {
            return { code: ErrorCode.NotPending, reason: Reason.NOT_PENDING, message: `no approval is waiting for ${JSON.stringify(f.callId)} (already answered, cancelled, or never asked)` };
          }
          await sleep(DESK_WAIT_MS);
        }
        done = new Promise((r) => setTimeout(r, EFFECT_WAIT_MS).unref?.());
      } else if (f.kind === 'cancel') {
        // Resolves once the session is idle again, at once when nothing runs (nothing is logged then).
        done = session.cancel(f.by);
      } else {
        // Resolves once the compaction is done (one asked while one runs joins it, and is not logged).
        done = session.compact(f.by);
      }
      const seq = await Promise.race([logged, done.then(() => 0, () => 0)]);
      if (seq > 0) await rec.flush();
      return seq;
    } finally {
      off();
    }
  };
  return {
    id,
    claim: async () => {
      if (log.lock) return log.lock;
      if (log.ready) return log.ready;
      throw new Error(`session ${id}'s log keeps no claim to take forwarded requests under`);
    },
    entries: () => rec.entries,
    lastSeq: () => rec.lastSeq,
    flush: () => rec.flush(),
    onEntry: (f) => rec.onEntry(f),
    apply,
    tapDeltas: (tap) => hosted.tapDeltas(tap),
  };
}
