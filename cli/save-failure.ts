/**
 * What the CLI tells a person when the session could not be saved (ADR 0017):
 * a turn's end is shown only once it is durable, and a save that failed is
 * one line naming the code and the store's error — never "completed".
 */
import type { Entry } from '../log/entries.js';
import { isSaveFailureCode, LogNotDurableError } from '../log/errors.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { SessionCrashedError } from '../runtime/session-fault.js';
import type { SessionFeedEvent } from '../runtime/wiring/feed.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import { visible } from './visible.js';

/** The entry a display shows for this event: every one as it is appended, except `turn/end`, only once it is durable (save before notify). */
export function entryToShow(ev: SessionFeedEvent): Entry | undefined {
  if (ev.type === 'entry.appended') return ev.entry.kind !== 'turn/end' ? ev.entry : undefined;
  if (ev.type === 'entry.saved') return ev.entry.kind === 'turn/end' ? ev.entry : undefined;
  return undefined;
}

const resumeHint = (logPath: string) => `; once the disk is fixed, \`bridle resume ${logPath}\` continues from what was saved`;

/** The one line for a turn that ended because the log could not be saved, or undefined when it did not. */
export function unsavedTurnLine(out: TurnOutput | undefined, logPath: string): string | undefined {
  if (!out || out.reason !== 'error' || !isSaveFailureCode(out.code)) return undefined;
  return visible(`bridle: the session could not be saved (${out.code}: ${out.cause ?? 'no detail'}); the turn did not complete${resumeHint(logPath)}`);
}

/** The one line for a session that crashed because its log could not be saved (even closing the turn failed). */
export function crashedLine(e: SessionCrashedError, logPath: string): string {
  const f = e.saveFailure;
  if (!f) return visible(`bridle: ${e.message} (${e.code})`);
  return visible(`bridle: the session could not be saved (${f.code}: ${e.message.replace(/^the session crashed and takes no more input: /, '')}); the turn did not complete${resumeHint(logPath)}`);
}

/** The one line for a last flush (the checkpoint after a saved turn) that failed as the session closed. */
export function closeFailureLine(err: unknown, logPath: string): string | undefined {
  if (!(err instanceof LogNotDurableError)) return undefined;
  return visible(`bridle: the session could not be saved as it closed (${err.code}: ${err.message}); the turns before it were saved${resumeHint(logPath)}`);
}

/**
 * Closes the session and gives the line to print when its last flush failed (`closeFailureLine`), or undefined when it closed.
 * Contract: rejects with any other error `close` rejects with.
 */
export async function closeSaying(session: Pick<BridleSession, 'close'>, logPath: string): Promise<string | undefined> {
  return session.close().then(
    () => undefined,
    (e: unknown) => {
      const line = closeFailureLine(e, logPath);
      if (line === undefined) throw e;
      return line;
    },
  );
}
