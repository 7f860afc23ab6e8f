/**
 * The inbox a checkpoint holds — queued followups, injects, a pending
 * `/compact` — came from input that arrived while the turn ran: followups,
 * steers that came too late for a step, injects after the last step, input
 * latched during a cancel. The log keeps no times for it, only the result;
 * replay sends input that leaves the same inbox, at the turn's end.
 */
import type { Origin } from '../log/entries.js';
import type { Followup, InputMode } from '../machines/session.machine.js';
import type { InboxTarget } from './script.js';

export interface Send {
  text: string;
  mode: InputMode;
  origin?: Origin;
}

export interface InboxNow {
  /** The session still forwards steer and inject to the turn (not cancelling). */
  active: boolean;
  /** The ending turn's unused steer and inject: the session prepends them to its queues. */
  turnSteer: readonly string[];
  turnInject: readonly string[];
  followups: readonly Followup[];
  injects: readonly string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const startsWith = <T>(xs: readonly T[], head: readonly T[]) => same(xs.slice(0, head.length), head);
const followup = (f: Followup): Send => (typeof f === 'string' ? { text: f, mode: 'followup' } : { text: f.text, mode: 'followup', origin: f.origin });
const steer = (text: string): Send => ({ text, mode: 'steer' });
const inject = (text: string): Send => ({ text, mode: 'inject' });

/**
 * Contract: pure. The steer and inject the turn must still receive to end
 * with the leftovers the checkpoint's `last` names; empty when it has them,
 * undefined when it holds something else. Only an active session forwards them.
 */
export function leftoverSends(now: Pick<InboxNow, 'turnSteer' | 'turnInject'>, target: InboxTarget): Send[] | undefined {
  if (!startsWith(target.leftoverSteer, now.turnSteer) || !startsWith(target.leftoverInject, now.turnInject)) return undefined;
  return [...target.leftoverSteer.slice(now.turnSteer.length).map(steer), ...target.leftoverInject.slice(now.turnInject.length).map(inject)];
}

/** What to send while the turn ends: its leftovers first, then (if needed) a cancel, then what the session queues. */
export interface InboxPlan {
  /** Steer and inject the turn keeps as leftovers (sent while the session is active). */
  leftovers: Send[];
  /**
   * Injects the session kept for later arrived while it was cancelling: a cancel that came while the
   * turn was already ending, which logs nothing. Replay sends one to get there.
   */
  cancel: boolean;
  queued: Send[];
}

/**
 * Contract: pure. The input to send now — while the turn is ending, before
 * the session settles it — so that the session's queues and the turn's
 * leftovers equal `target`; undefined when no input can (then the log was
 * not written by these machines, or the input came in a way replay cannot
 * time).
 *
 * When the turn ends the session computes followups = leftover steer ++ its
 * queue and injects = leftover inject ++ its injects. While active, a steer
 * or inject sent now joins the turn's leftovers, a followup the session's
 * queue; while cancelling, everything joins the session's side.
 */
export function inboxPlan(now: InboxNow, target: InboxTarget): InboxPlan | undefined {
  const leftovers = leftoverSends(now, target);
  if (!leftovers || (!now.active && leftovers.length > 0)) return undefined;
  const queued = target.followups.slice(target.leftoverSteer.length);
  const injected = target.injects.slice(target.leftoverInject.length);
  if (!startsWith(target.followups, target.leftoverSteer) || !startsWith(queued, now.followups)) return undefined;
  if (!startsWith(target.injects, target.leftoverInject) || !startsWith(injected, now.injects)) return undefined;
  const lateInjects = injected.slice(now.injects.length);
  return { leftovers, cancel: now.active && lateInjects.length > 0, queued: [...queued.slice(now.followups.length).map(followup), ...lateInjects.map(inject)] };
}
