/**
 * Before a server claims a session of its store that it does not host (an
 * attach, an input, a relay making way, the lease sweep), it asks whether it
 * could run it at all (ADR 0042): a Ralph run, a directory it does not allow,
 * a loop other than the one its log ran (ADR 0096), a logged policy its own
 * flags would widen, a model it cannot build. A worker that cannot run a session must not take its lease — a takeover it
 * logs and then refuses leaves the lease released to nobody, and with it the
 * session's open turn — so each of those is refused here, from the log as
 * read without the claim, and another worker's sweep can take it. What this
 * read misses (the log changed before the claim) is still refused after the
 * claim, as before.
 */
import type { Entry } from '../log/entries.js';
import type { SessionRelay } from '../ports/relay.js';
import { CompositionError } from '../plugins/composition-error.js';
import { readSessionLog } from '../runtime/logs/read.js';
import { ralphState } from '../runtime/ralph/state.js';
import { loggedWorkspace, PolicyWidenedError } from '../runtime/session-policy.js';
import type { SessionRef } from '../runtime/stores.js';
import { checkCwd } from '../server/allowed-cwd.js';
import { ErrorCode, refusal, Reason, type RpcFailure } from '../server/protocol.js';
import { LoopChangedError } from './errors.js';
import { preflightContinued } from './open-session.js';
import type { Product } from './settings.js';

/** The log as it stands, read without a claim; undefined when it cannot be read whole (repair, after the claim, says why). */
async function readUnclaimed(where: SessionRef): Promise<Entry[] | undefined> {
  try {
    const read = await readSessionLog(where.store, where.id);
    return read?.ok ? read.entries : undefined;
  } catch {
    return undefined;
  }
}

/** Whether another worker holds the session's lease now (a server relays such a session, whatever it could run). */
async function heldElsewhere(relay: SessionRelay | undefined, id: string): Promise<boolean> {
  try {
    return (await relay?.ownerLive(id)) ?? false;
  } catch {
    return false;
  }
}

/**
 * Contract: resolves when nothing in the log as it stands keeps this server from running the session (or the log
 * cannot be read whole: repair decides); else rejects with the refusal a client gets — `SESSION_NOT_RESUMABLE`
 * (a Ralph run, a directory not allowed), `LOOP_MISMATCH` or `LOOP_UNAVAILABLE` (another loop than the log's,
 * ADR 0096), `POLICY_WIDENED`, `MODEL_UNAVAILABLE` — or `SESSION_LOCKED` when another
 * worker holds the session now (so it is relayed, not refused). Claims nothing and writes nothing.
 */
export async function refuseBeforeClaim(product: Product, where: SessionRef, roots: readonly string[], relay?: SessionRelay): Promise<void> {
  const id = where.id;
  const entries = await readUnclaimed(where);
  const start = entries?.[0];
  if (!entries || start?.kind !== 'session/start') return;
  let refused: RpcFailure | undefined;
  const notResumable = (why: string) => refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_RESUMABLE, `session ${id} cannot be resumed here: ${why}`);
  // Where its log says it runs now (ADR 0041), as the open will use.
  const cwd = checkCwd(loggedWorkspace(entries) ?? start.cwd, roots);
  if (ralphState(entries)) refused = notResumable('it is a Ralph run; continue it with bridle resume');
  else if (!cwd.ok) refused = notResumable(`its directory is not one this server allows (${cwd.reason})`);
  else {
    try {
      preflightContinued(product, cwd.cwd, entries);
    } catch (err) {
      if (err instanceof LoopChangedError) refused = refusal(ErrorCode.CreateFailed, Reason[err.code], `session ${id} cannot be run by this server: ${err.message}`);
      else if (err instanceof PolicyWidenedError) refused = refusal(ErrorCode.CreateFailed, Reason.POLICY_WIDENED, `session ${id} cannot be run by this server: ${err.message}`);
      else if (err instanceof CompositionError) refused = refusal(ErrorCode.CreateFailed, Reason.MODEL_UNAVAILABLE, `session ${id} cannot be run by this server: ${err.message}`);
      else throw err;
    }
  }
  if (!refused) return;
  if (await heldElsewhere(relay, id)) throw refusal(ErrorCode.CreateFailed, Reason.SESSION_LOCKED, `session ${id} is held by another worker`);
  throw refused;
}
