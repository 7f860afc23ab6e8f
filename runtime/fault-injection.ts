/**
 * The process's fault-injection inspector (ADR 0043): one slot, empty unless
 * the CLI filled it at start-up because `BRIDLE_SOAK_KILL_AT` or
 * `BRIDLE_SOAK_STATES` was set (cli/soak-kill.ts). Every actor system bridle
 * creates — a session, an in-process child session, a delegation's subagent
 * machine — is created with `faultInspected(own)`, so the hook sees the
 * machines of the whole process without being threaded through every port.
 *
 * It is not part of the log path: it observes, and at most ends the process
 * (as a SIGKILL from outside would). Empty, `faultInspected` hands back the
 * caller's own inspector unchanged (usually `undefined`), so xstate does no
 * inspection work at all.
 */
import type { InspectionEvent, Observer } from 'xstate';

export type Inspect = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

let hook: ((event: InspectionEvent) => void) | undefined;

/** Contract: called once, by the CLI's entry, before any session opens; a second call replaces the first. */
export function installFaultInspector(f: (event: InspectionEvent) => void): void {
  hook = f;
}

/** `own` when no hook is installed (zero cost); otherwise the hook, then `own`. */
export function faultInspected(own: Inspect | undefined): Inspect | undefined {
  const h = hook;
  if (!h) return own;
  if (!own) return h;
  return (e) => {
    h(e);
    if (typeof own === 'function') own(e);
    else own.next?.(e);
  };
}
