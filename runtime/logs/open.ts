/**
 * Going on with a stored session (`run --session`, a server reopening one, resume after its repair): the
 * writer's claim first, then the read, so nothing another writer appends can be missed; then the checks that
 * the log is one this bridle can go on with. Written once against the store port (docs/design.md §3).
 */
import { codes, type CodeOf } from '../../log/codes.js';
import type { Entry } from '../../log/entries.js';
import { LogAccessError } from '../../log/errors.js';
import { resumableTurn } from '../../log/resumable.js';
import type { SessionStore, WriterLock } from '../../ports/store.js';
import { readSessionLog } from './read.js';

/** Why a session's log cannot be gone on with as it is (`SessionLogError`'s stable `code`). */
export const SessionLogCode = codes({
  NO_SESSION: 'The store holds no session of that id.',
  LOG_CORRUPT: 'The log does not verify.',
  LOG_TORN: 'The log\'s last line is torn: `bridle resume` repairs it.',
  NO_SESSION_START: 'The log does not begin with session/start.',
  TURN_OPEN: 'The last turn never ended and cannot be resumed here.',
});
export type SessionLogCode = CodeOf<typeof SessionLogCode>;

/** Why a session's log cannot be gone on with as it is; `code` is stable, the message names the log. */
export class SessionLogError extends Error {
  override name = 'SessionLogError';
  constructor(
    readonly code: SessionLogCode,
    message: string,
  ) {
    super(message);
  }
}

const isOpen = (entries: readonly Entry[]) => entries.filter((e) => e.kind === 'turn/start').length !== entries.filter((e) => e.kind === 'turn/end').length;

/** A session that is not there: said the same for every store (`acp` answers it `NO_SUCH_SESSION`). */
export const noSession = (store: SessionStore, id: string) => new SessionLogError(SessionLogCode.NO_SESSION, `no session log at ${store.locate(id)}`);

/**
 * Takes the claim on session `id` (unless `lock` is held already) and reads its log under it.
 * Contract: resolves with the claim held and the log's entries (`existing`, when given, instead of reading);
 * throws `SessionLogError` for a log that is not there, is corrupt or torn, does not begin with
 * `session/start`, or ends in an open turn that is not one to go on with (ADR 0027, 0031) — repair's, then;
 * `SessionLockedError` while another writer holds it; `LogAccessError` for a log that is not a readable file.
 * A claim taken here is released on every failure; a given one is the caller's.
 */
export async function claimToGoOn(store: SessionStore, id: string, o: { lock?: WriterLock; existing?: Entry[] } = {}): Promise<{ lock: WriterLock; entries: Entry[]; location: string }> {
  let lock: WriterLock;
  try {
    lock = o.lock ?? (await store.claim(id));
  } catch (err) {
    // A claim that cannot be written beside a log that is not there: the log's absence is what to say.
    if (err instanceof LogAccessError && !(await store.read(id).catch(() => undefined))) throw noSession(store, id);
    throw err;
  }
  try {
    const entries = o.existing ?? (await readWhole(store, id));
    const where = store.locate(id);
    if (entries[0]?.kind !== 'session/start') throw new SessionLogError(SessionLogCode.NO_SESSION_START, `${where}: does not begin with session/start`);
    // A turn left waiting on an approval, or answered and not dispatched (a fork's new answer), is gone on with (ADR 0027, 0031); any other open turn is repair's.
    if (isOpen(entries) && !resumableTurn(entries)) throw new SessionLogError(SessionLogCode.TURN_OPEN, `${where}: the last turn never ended (a crash?); run \`bridle resume ${where}\` to repair it first`);
    return { lock, entries, location: where };
  } catch (err) {
    if (!o.lock) lock.release();
    throw err;
  }
}

async function readWhole(store: SessionStore, id: string): Promise<Entry[]> {
  const read = await readSessionLog(store, id);
  if (!read) throw noSession(store, id);
  if (!read.ok) throw new SessionLogError(SessionLogCode.LOG_CORRUPT, `${read.location} is corrupt (${read.violations[0]!.violation}): ${read.violations[0]!.message}`);
  if (read.torn) throw new SessionLogError(SessionLogCode.LOG_TORN, `${read.location}: torn last line (line ${read.torn.line}); run \`bridle resume\` to repair it`);
  return read.entries;
}
