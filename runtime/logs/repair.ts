/**
 * Crash repair of a session's log through the store port (docs/design.md §3, ADR 0017): under the writer's
 * claim, the log is read whole, a torn tail cut off, and whatever the crash left open closed by appended
 * entries (`log/repair.ts` plans them; nothing is re-run). A crash during `delegate` leaves the children open
 * too: each child an open `subagent/start` (or a link, or a cancel) names is a session of the same store, and
 * is repaired first under its own claim (its own children before it), so that a crash during the repair itself
 * leaves the parent open and the next repair finds every child again. One procedure for every store.
 */
import type { Clock } from '../../log/clock.js';
import type { Draft, Entry } from '../../log/entries.js';
import { LogAccessError, LogCorruptError, LogFormatError, SessionLockedError } from '../../log/errors.js';
import { LOG_FORMAT } from '../../log/entries-session.js';
import { Recorder } from '../../log/recorder.js';
import { planRepair, type RepairReport } from '../../log/repair.js';
import type { Violation } from '../../log/verdict.js';
import type { SessionStore, StoredLog, WriterLock } from '../../ports/store.js';
import { holdsNothing, parseStoredLog, unreadable } from './read.js';

export type SessionRepair =
  | { ok: true; entries: Entry[]; appended: Entry[]; report: RepairReport; children: ChildRepair[] }
  | { ok: false; violations: Violation[] };

/** A child session the repair of its parent visited, and what became of it. */
export interface ChildRepair {
  child: string;
  /** Where its log is, as the store names it. */
  location: string;
  /** `missing`: the store has no such session (nothing to repair); `refused`: corrupt, unreadable or held by a live writer, and left as it was. */
  outcome: { kind: 'repaired'; repair: Extract<SessionRepair, { ok: true }> } | { kind: 'missing' } | { kind: 'refused'; violations: Violation[] };
}

/** A child's id is one name, nothing that climbs out of where its parent's log is (a JSONL directory). */
const isPlainName = (id: string) => id.length > 0 && id !== '.' && id !== '..' && !/[/\\\0]/.test(id);

export interface RepairOptions {
  /** Drafts appended before the repair's own, whatever it finds (the `session/takeover` of a stale claim), and only if the log is not refused. */
  first?: readonly Draft[];
  /** A turn that stopped waiting on an approval is left open for the session to go on with (ADR 0027; `planRepair`). */
  keepPending?: boolean;
}

/**
 * Repairs session `id` of `store` in place, under `lock` (held by the caller, and still held when this resolves:
 * the session goes on under it), and first, the same way, every child it left open.
 * Contract: refuses (ok: false, log untouched) a log with a defect before its open end, or written in an older
 * format than this bridle goes on with (`LogFormatError`'s message); otherwise, when it resolves, the log holds
 * every good line it held before, byte for byte, followed by the repair entries, durable. A child that cannot be
 * repaired is reported in `children`, never a reason to leave the parent open. A clean log is left as it was.
 * Throws `LogAccessError` (the log cannot be read or written) or the store's error, for `id` itself; undefined
 * when the store has no such session or holds nothing of it (`holdsNothing`: claimed, never committed).
 */
export async function repairSession(store: SessionStore, id: string, lock: WriterLock, clock: Clock, opts: RepairOptions = {}, visiting: ReadonlySet<string> = new Set()): Promise<SessionRepair | undefined> {
  let raw: StoredLog | undefined;
  try {
    raw = await store.read(id);
  } catch (err) {
    if (err instanceof LogCorruptError) {
      const bad = unreadable(store.locate(id), err);
      return { ok: false, violations: bad.ok ? [] : bad.violations };
    }
    throw err;
  }
  if (!raw || holdsNothing(raw)) return undefined;
  // An older log is refused before repair touches it: it logged no inputs, so what it had queued cannot be known (ADR 0021).
  const format = headerFormat(raw.lines[0]);
  if (format !== undefined && format < LOG_FORMAT) return { ok: false, violations: [{ violation: 'format-old', seq: 1, message: new LogFormatError(format, LOG_FORMAT, 'resuming it').message }] };
  const read = parseStoredLog(raw);
  if (!read.ok) return { ok: false, violations: read.violations };
  const plan = planRepair(read.entries, { ...(read.torn ? { torn: read.torn } : {}), ...(opts.keepPending ? { keepPending: true } : {}) });
  if (!plan.ok) return plan;
  const children: ChildRepair[] = [];
  const seen = new Set([...visiting, id]);
  for (const child of [...plan.report.subagents, ...plan.report.linked, ...(plan.report.cancelled ?? [])]) children.push(await repairChild(store, child, clock, seen));
  const drafts = [...(opts.first ?? []), ...plan.drafts];
  const dirty = read.torn !== undefined || raw.last !== undefined;
  if (drafts.length === 0 && !dirty) return { ok: true, entries: read.entries, appended: [], report: plan.report, children };
  // Opened to repair: the torn tail is cut first, and closing it leaves the claim to the session that goes on.
  const log = store.open(id, { lock, repair: true });
  const recorder = new Recorder(log, clock, read.entries);
  const appended = drafts.map((d) => recorder.append(d));
  await log.close();
  return { ok: true, entries: recorder.entries.slice(), appended, report: plan.report, children };
}

function headerFormat(line: string | undefined): number | undefined {
  try {
    const h = JSON.parse(line ?? '') as { kind?: unknown; format?: unknown } | null;
    return h?.kind === 'session/start' && typeof h.format === 'number' ? h.format : undefined;
  } catch {
    return undefined;
  }
}

async function repairChild(store: SessionStore, child: string, clock: Clock, seen: ReadonlySet<string>): Promise<ChildRepair> {
  const refused = (location: string, violation: string, message: string): ChildRepair => ({ child, location, outcome: { kind: 'refused', violations: [{ violation, seq: null, message }] } });
  if (!isPlainName(child)) return refused(store.location, 'bad-child', `subagent/start names child ${JSON.stringify(child)}, which is not a log name beside its parent's`);
  const location = store.locate(child);
  if (seen.has(child)) return refused(location, 'bad-child', `child ${child} is already being repaired higher up the tree (a log that names its own ancestor)`);
  // The child's writer died with its parent: its claim is taken over for the repair and released after it; a live one means someone writes the child, and it is left alone.
  let lock: WriterLock;
  try {
    lock = await store.claim(child);
  } catch (err) {
    if (err instanceof SessionLockedError || err instanceof LogAccessError) {
      if (!(await store.read(child).catch(() => undefined))) return { child, location, outcome: { kind: 'missing' } };
      return refused(location, err.code, err.message);
    }
    return refused(location, 'unavailable', (err as Error).message);
  }
  try {
    // A log that holds no line at all was never saved (a store that commits at a flush claims the child before its
    // first commit): nothing of it ran that a repair could close, as for a child with no log (issue #26).
    const r = await repairSession(store, child, lock, clock, {}, seen);
    if (!r) return { child, location, outcome: { kind: 'missing' } };
    return { child, location, outcome: r.ok ? { kind: 'repaired', repair: r } : { kind: 'refused', violations: r.violations } };
  } catch (err) {
    if (!(err instanceof LogAccessError)) return refused(location, 'unavailable', (err as Error).message);
    return refused(location, err.code, err.message);
  } finally {
    lock.release();
  }
}
