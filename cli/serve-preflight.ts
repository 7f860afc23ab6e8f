/**
 * Before a server claims a session of its store that it does not host (an
 * attach, an input, a relay making way, the lease sweep), it asks whether it
 * could run it at all (ADR 0042): a Ralph run, a directory it does not allow,
 * a logged policy its own flags would widen, a model it cannot build. A
 * worker that cannot run a session must not take its lease — a takeover it
 * logs and then refuses leaves the lease released to nobody, and with it the
 * session's open turn — so each of those is refused here, from the log as
 * read without the claim, and another worker's sweep can take it. What this
 * read misses (the log changed before the claim) is still refused after the
 * claim, as before.
 */
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import { leaseStatus } from '../adapters/store/postgres-workers.js';
import type { Entry } from '../log/entries.js';
import { CompositionError } from '../plugins/rows.js';
import { ralphState } from '../runtime/ralph/state.js';
import { loggedWorkspace, PolicyWidenedError } from '../runtime/session-policy.js';
import { checkCwd } from '../server/allowed-cwd.js';
import { ErrorCode, refusal, type RpcFailure } from '../server/protocol.js';
import { preflightContinued } from './open-session.js';
import { parseStoredLines, type StoreTarget } from './session-store.js';
import type { Product } from './settings.js';

/** The log as it stands, read without a claim; undefined when it cannot be read whole (repair, after the claim, says why). */
async function readUnclaimed(where: StoreTarget, id: string): Promise<Entry[] | undefined> {
  try {
    if (where.kind === 'postgres') {
      const read = parseStoredLines((await where.store.tail(id)) ?? []);
      return read.ok ? read.entries : undefined;
    }
    const read = readLogFile(where.path);
    return read.ok ? read.entries : undefined;
  } catch {
    return undefined;
  }
}

/** Whether another worker holds the session's lease now (a server relays such a session, whatever it could run). */
async function heldElsewhere(where: StoreTarget, id: string): Promise<boolean> {
  if (where.kind !== 'postgres') return false;
  try {
    return (await leaseStatus(await where.store.pool(), id))?.live ?? false;
  } catch {
    return false;
  }
}

/**
 * Contract: resolves when nothing in the log as it stands keeps this server from running the session (or the log
 * cannot be read whole: repair decides); else rejects with the refusal a client gets — `SESSION_NOT_RESUMABLE`
 * (a Ralph run, a directory not allowed), `POLICY_WIDENED`, `MODEL_UNAVAILABLE` — or `SESSION_LOCKED` when another
 * worker holds the session now (so it is relayed, not refused). Claims nothing and writes nothing.
 */
export async function refuseBeforeClaim(product: Product, where: StoreTarget, id: string, roots: readonly string[]): Promise<void> {
  const entries = await readUnclaimed(where, id);
  const start = entries?.[0];
  if (!entries || start?.kind !== 'session/start') return;
  let refused: RpcFailure | undefined;
  const notResumable = (why: string) => refusal(ErrorCode.CreateFailed, 'SESSION_NOT_RESUMABLE', `session ${id} cannot be resumed here: ${why}`);
  // Where its log says it runs now (ADR 0041), as the open will use.
  const cwd = checkCwd(loggedWorkspace(entries) ?? start.cwd, roots);
  if (ralphState(entries)) refused = notResumable('it is a Ralph run; continue it with bridle resume');
  else if (!cwd.ok) refused = notResumable(`its directory is not one this server allows (${cwd.reason})`);
  else {
    try {
      preflightContinued(product, cwd.cwd, entries);
    } catch (err) {
      if (err instanceof PolicyWidenedError) refused = refusal(ErrorCode.CreateFailed, 'POLICY_WIDENED', `session ${id} cannot be run by this server: ${err.message}`);
      else if (err instanceof CompositionError) refused = refusal(ErrorCode.CreateFailed, 'MODEL_UNAVAILABLE', `session ${id} cannot be run by this server: ${err.message}`);
      else throw err;
    }
  }
  if (!refused) return;
  if (await heldElsewhere(where, id)) throw refusal(ErrorCode.CreateFailed, 'SESSION_LOCKED', `session ${id} is held by another worker`);
  throw refused;
}
