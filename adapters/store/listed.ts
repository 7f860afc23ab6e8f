/**
 * What a store's listing says of a session besides its header and marker, read from lines it already has
 * (ADR 0063): `updatedAt`, the last whole line's `at`, and `title`, the first user input's first line. Nothing
 * is read for them that the listing did not read already.
 */
import { titleOf, type StoredSession } from '../../ports/store.js';

/** How many of a log's first lines are searched for its first input: a title is not worth a whole read. */
export const TITLE_LINES = 64;

/** Contract: pure; never throws; a line that is not an entry is passed over. */
export function listedExtras(head: readonly string[], tail: readonly string[] = head): Pick<StoredSession, 'updatedAt' | 'title'> {
  const out: Pick<StoredSession, 'updatedAt' | 'title'> = {};
  const last = tail.findLast((l) => l.trim() !== '');
  const at = last ? /^\{"seq":[0-9]+,"at":"([^"]{1,40})"/.exec(last)?.[1] : undefined;
  if (at !== undefined) out.updatedAt = at;
  for (const line of head.slice(0, TITLE_LINES)) {
    if (!line.includes('"kind":"session/input"')) continue;
    try {
      const e = JSON.parse(line) as { kind?: unknown; origin?: unknown; text?: unknown };
      if (e.kind === 'session/input' && e.origin === 'user' && typeof e.text === 'string' && e.text.trim() !== '') {
        out.title = titleOf(e.text);
        break;
      }
    } catch {}
  }
  return out;
}
