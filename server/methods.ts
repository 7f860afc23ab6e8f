/**
 * What each JSON-RPC method does. Params arrive parsed (protocol.ts); results follow `MethodResults`. Every
 * method that names a session but `session/attach` acts on it, and is open only to a client attached to it
 * (`Hub.attachedTo`, `NOT_ATTACHED`): a token lets a client in, attaching is what lets it drive a session.
 */
import { LogAppendError, LogNotDurableError } from '../log/errors.js';
import { SessionCrashedError } from '../runtime/session-fault.js';
import type { Peer } from './attachment.js';
import type { Hub } from './hub.js';
import { ErrorCode, refusal, Reason, type Method, type ParamsOf, type ResultOf } from './protocol.js';

export interface CallContext {
  hub: Hub;
  peer: Peer;
  /** Sessions this peer is attached to, so a closing connection detaches from all. */
  attached: Set<string>;
  /** Runs after the response to this call has been sent. */
  after(fn: () => void | Promise<void>): void;
}

const isSaveFailure = (err: unknown): err is LogNotDurableError | LogAppendError => err instanceof LogNotDurableError || err instanceof LogAppendError;

type Methods = { [M in Method]: (p: ParamsOf<M>, ctx: CallContext) => ResultOf<M> | Promise<ResultOf<M>> };

export const methods: Methods = {
  'session/create': async (p, { hub }) => ({ sessionId: (await hub.create(p)).id }),
  'session/list': (_p, { hub }) => ({ sessions: hub.list() }),
  'session/attach': async (p, { hub, peer, attached, after }) => {
    // A session this server does not host is opened from its store (repaired and resumed), when the server can.
    const s = await hub.find(p.sessionId);
    const fromSeq = p.fromSeq ?? 1;
    const { durableSeq, start } = s.attach(peer, fromSeq);
    attached.add(s.id);
    after(start);
    return { sessionId: s.id, fromSeq, durableSeq };
  },
  'session/input': async (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'sending it input');
    try {
      // Answered only once the input is in the log, durably: a client told `accepted` can lose it to no crash.
      return { accepted: true, seq: await hub.input(p.sessionId, p.text, p.mode) };
    } catch (err) {
      if (err instanceof SessionCrashedError) throw refusal(ErrorCode.SessionCrashed, Reason.SESSION_CRASHED, err.message);
      if (isSaveFailure(err)) throw refusal(ErrorCode.NotSaved, Reason.SESSION_NOT_SAVED, `the session could not save the input, so it is not acknowledged (${err.code}: ${err.message}); nothing the session does after it can be saved either`);
      throw err;
    }
  },
  // On a worker that relays the session: forwarded to the one that runs it, answered once it has logged it (ADR 0032).
  'session/cancel': async (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'cancelling its turn');
    await hub.cancel(p.sessionId);
    return { requested: true };
  },
  'session/compact': async (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'compacting it');
    await hub.cancel(p.sessionId, true);
    return { requested: true };
  },
  'session/snapshot': (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'reading its snapshot');
    return hub.get(p.sessionId).snapshot();
  },
  'session/cost': async (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'reading its cost');
    const cost = await hub.cost(p.sessionId);
    return { sessionId: p.sessionId, cost: (cost ?? null) as Record<string, unknown> | null };
  },
  'session/close': async (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'closing it');
    await hub.end(p.sessionId);
    return { closed: true };
  },
  'session/fork': (p, { hub, peer }) => {
    hub.attachedTo(p.sessionId, peer, 'forking it');
    return hub.fork(p);
  },
  'approval/respond': async (p, { hub, peer }) => {
    await hub.respond(p.sessionId, peer, p.callId, p.outcome, p.values);
    return { accepted: true };
  },
};

export function dispatch(method: Method, params: unknown, ctx: CallContext): unknown {
  return (methods[method] as (p: unknown, c: CallContext) => unknown)(params, ctx);
}
