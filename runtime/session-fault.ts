/**
 * The session's crash path (ADR 0012). A turn whose machines threw — a log
 * append that failed is the expected cause — is closed as data: the log gets
 * a `repair` note and the entries crash repair would write, ending in
 * `turn/end` error with the failure's code, and the session goes on. A session that cannot even do that is crashed,
 * and says so to whoever sends it input.
 */
import type { DraftOf } from '../log/entries.js';
import { isSaveFailureCode, LogAppendError, LogNotDurableError, LogAppendCode } from '../log/errors.js';
import { flushOrNote } from '../log/not-durable.js';
import type { Recorder } from '../log/recorder.js';
import { planRepair } from '../log/repair.js';
import { pendingInputs } from '../log/inputs.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import { TurnEndCode } from '../log/codes.js';

/** Thrown by `send` and rejected by `run` once the session's actor has crashed: input would be swallowed. */
export class SessionCrashedError extends Error {
  readonly code = TurnEndCode.SESSION_CRASHED;
  /** The store's failure behind the crash, when the log could not be saved (an append or a flush the store refused). */
  readonly saveFailure?: LogAppendError | LogNotDurableError;
  constructor(cause: unknown) {
    super(`the session crashed and takes no more input: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'SessionCrashedError';
    const failure = saveFailureIn(cause);
    if (failure) this.saveFailure = failure;
  }
}

/** The first store failure down an error's cause chain. */
function saveFailureIn(err: unknown): LogAppendError | LogNotDurableError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof LogNotDurableError || (e instanceof LogAppendError && e.code === LogAppendCode.LOG_APPEND_FAILED)) return e;
  }
  return undefined;
}

/** The code a turn that crashed ends with: the failed append's, else `TURN_CRASHED` (a harness bug). */
export const faultCode = (error: unknown): string => (error instanceof LogAppendError ? error.code : 'TURN_CRASHED');

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Closes the crashed turn `turn` in the log: the open step, calls and
 * compaction as crash repair would (a dispatched call's outcome is unknown,
 * nothing is re-run), `turn/end` error with the code, then a flush.
 * Contract: rejects only when the log cannot take those entries or be
 * flushed; the session is then crashed.
 */
export async function closeFaultedTurn(recorder: Recorder, turn: string, error: unknown, held: ReadonlySet<number> = new Set()): Promise<TurnOutput> {
  const code = faultCode(error);
  const cause = messageOf(error);
  // A result the store refused is still what the tool did: the closing logs it instead of "outcome unknown" (ADR 0017).
  const draft = error instanceof LogAppendError ? error.draft : undefined;
  const known = draft?.kind === 'tool/result' ? [draft as DraftOf<'tool/result'>] : [];
  const plan = planRepair(recorder.entries, { closeAs: { reason: 'error', code, cause }, because: { found: 'turn-fault', detail: `${code}: ${cause}` }, known });
  if (!plan.ok) throw new Error(`the crashed turn ${turn} cannot be closed: ${plan.violations.map((v) => v.message).join('; ')}`, { cause: error });
  try {
    for (const d of plan.drafts) recorder.append(d);
    // A turn whose `turn/start` never made it into the log has nothing to close: the note says why it is missing.
    if (!plan.report.turn) recorder.append({ kind: 'repair', found: 'turn-fault', detail: `${code}: ${cause}; turn ${turn} was not logged` });
  } catch (closing) {
    // The store refuses the closing too (a full disk): the session is crashed, and says what failed first.
    throw new Error(`${cause}; the turn could not be closed in the log either: ${messageOf(closing)}`, { cause: error });
  }
  const end = recorder.entries.findLast((e) => e.kind === 'turn/end' && e.turn === turn);
  // Steer and inject the crashed turn held and never delivered go back to the session, as a turn's leftovers do: the
  // log says which (logged inputs no entry took), less what the session holds itself and the turn's own input (ADR 0021).
  const left = pendingInputs(recorder.entries).filter((e) => !held.has(e.seq) && e.mode !== 'followup');
  const queued = (mode: 'steer' | 'inject') => left.filter((e) => e.mode === mode).map((e) => ({ seq: e.seq, text: e.text }));
  const out: TurnOutput = { turn, reason: 'error', code, cause, steps: end?.kind === 'turn/end' ? end.steps : 0, leftoverSteer: queued('steer'), leftoverInject: queued('inject') };
  try {
    await flushOrNote(recorder);
  } catch (err) {
    if (!(err instanceof LogNotDurableError)) throw err;
    // The closing is written but not saved, and the note says so. As for any turn whose end could not be saved, the
    // turn reports LOG_NOT_DURABLE, unless a save failure ended it already (the fold of the log reads it the same way).
    if (!isSaveFailureCode(code)) return { ...out, code: err.code, cause: err.message };
  }
  return out;
}
