/**
 * The entries that decide a session's state as a listing shows it (`bridle sessions`): a turn open or closed,
 * the session ended or reopened. Every store finds a session's last one in its lines, so it is said once here.
 */
export const MARKER_KINDS = ['turn/start', 'turn/end', 'session/end', 'session/reopen'] as const;

/** A canonical line is `JSON.stringify(entry)`, whose third key is always `kind`: this matches the top-level kind, never a nested one. */
export const MARKER_LINE = new RegExp(`^\\{"seq":[0-9]+,"at":"[^"]*","kind":"(${MARKER_KINDS.join('|')})"`);

/** The kind of the last marker among `lines`, if any. Contract: pure. */
export function markerIn(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = MARKER_LINE.exec(lines[i]!);
    if (m) return m[1];
  }
  return undefined;
}
