/**
 * `session/list` over the store's listing (ADR 0063): bridle's sessions as
 * ACP's `SessionInfo` (id, cwd, last activity, title), newest first,
 * filtered by `cwd`, in pages whose cursor is the offset of the next one.
 */
import type { ListSessionsResponse, SessionInfo } from '@agentclientprotocol/sdk';
import type { StoredSession } from '../../ports/store.js';

/** How many sessions one `session/list` answer holds. */
export const LIST_PAGE = 100;

/** A cursor this agent did not hand out. */
export class BadCursorError extends Error {
  override name = 'BadCursorError';
}

const infoOf = (s: StoredSession): SessionInfo => ({
  sessionId: s.id,
  cwd: s.cwd,
  ...(s.title !== undefined ? { title: s.title } : {}),
  ...(s.updatedAt !== undefined ? { updatedAt: s.updatedAt } : {}),
});

/** Contract: pure; throws `BadCursorError` for a cursor that is not one of its own. A session logged with no absolute cwd is left out. */
export function sessionPage(stored: readonly StoredSession[], o: { cwd?: string | null; cursor?: string | null; page?: number }): ListSessionsResponse {
  const size = o.page ?? LIST_PAGE;
  const from = o.cursor === undefined || o.cursor === null ? 0 : /^[0-9]{1,9}$/.test(o.cursor) ? Number(o.cursor) : NaN;
  if (!Number.isInteger(from)) throw new BadCursorError(`not a cursor of this agent: ${JSON.stringify(o.cursor).slice(0, 80)}`);
  const listed = stored
    .filter((s) => s.cwd.startsWith('/') && (o.cwd === undefined || o.cwd === null || s.cwd === o.cwd))
    .sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? '') || a.id.localeCompare(b.id));
  const page = listed.slice(from, from + size);
  return { sessions: page.map(infoOf), ...(from + size < listed.length ? { nextCursor: String(from + size) } : {}) };
}
