/**
 * `forkSession`: a new session whose log begins where another's was at rest
 * (ADR 0029). It reads the original through the store as a reader (no
 * claim), plans the fork (`log/fork.ts`), and writes the planned lines to a
 * new log of the same store under that log's own writer claim. No model is
 * called and no tool runs: the copied lines are the outcomes. The fork is
 * then opened like any session (`bridle run --session <fork>`, resume,
 * replay).
 */
import type { Clock } from '../../log/clock.js';
import type { Entry } from '../../log/entries.js';
import { LogCorruptError } from '../../log/errors.js';
import { ForkRefusalCode, planFork, type ForkPoint } from '../../log/fork.js';
import { LogParser } from '../../log/parse.js';
import type { SessionStore } from '../../ports/store.js';

export interface ForkOptions {
  /** Where both logs live: the original is read from it, the fork written to it. */
  store: SessionStore;
  /** The original's id in `store`. */
  session: string;
  /** The fork's id (a fresh one from the `ids` service, for a host). */
  id: string;
  /** The fork point: the last completed turn at or before this seq (default: the end); with `answer`, the entry answered anew. */
  at?: number;
  /**
   * What-if: `deny` at an `approval/decided` (logged as the fork's answer), new text at a `session/input`; `approve`
   * at an `approval/decided` leaves its question open, asked again where the fork goes on (ADR 0038).
   */
  answer?: string;
  /** Stamps the entries the fork writes itself (its header, the new answer). */
  clock: Clock;
}

export interface ForkedSession {
  id: string;
  /** The fork's log, as the store names it (a path, `postgres://…#id`). */
  location: string;
  forkOf: { session: string; seq: number };
  entries: Entry[];
  /** Set for a what-if of an approval: the fork ends inside that turn, to be closed by resume's repair. */
  open: boolean;
  /** A what-if `approve`: the call whose question the fork leaves open, asked again where the fork goes on (ADR 0038). */
  asks?: string;
}

/** A fork that cannot be made as asked; `code` is stable, `nearest` the valid points next to a refused one. */
export class ForkRefusedError extends Error {
  override name = 'ForkRefusedError';
  constructor(
    readonly code: ForkRefusalCode | 'FORK_NO_SESSION' | 'FORK_EXISTS',
    message: string,
    readonly nearest: readonly ForkPoint[] = [],
  ) {
    super(message);
  }
}

/** The original's whole lines as entries; a last line that does not parse is a torn tail and is left out. */
function parseLines(lines: readonly string[]): { entries: Entry[]; lines: string[]; skipped: number } {
  const parser = new LogParser();
  for (const [i, l] of lines.entries()) {
    try {
      parser.line(l);
    } catch (err) {
      if (!(err instanceof LogCorruptError)) throw err;
      if (i === lines.length - 1 && err.violation === 'bad-json') break;
      throw new ForkRefusedError(ForkRefusalCode.FORK_CORRUPT, `the log is corrupt: ${err.message}`);
    }
  }
  return { entries: parser.entries, lines: lines.slice(0, parser.entries.length), skipped: parser.skipped };
}

/**
 * Contract: writes nothing unless the fork verifies; throws `ForkRefusedError` (a stable code: a fork point
 * inside a turn, naming the nearest valid points; no such session; a fork id that exists), or the store's
 * own error when it cannot write. The original is never written.
 */
export async function forkSession(o: ForkOptions): Promise<ForkedSession> {
  const raw = await o.store.tail(o.session);
  if (!raw || raw.length === 0) throw new ForkRefusedError('FORK_NO_SESSION', `no session ${o.session} in the ${o.store.id} store`);
  const read = parseLines(raw);
  // A line of a kind this bridle skips (ignorable) has a seq of its own: copying around it would leave a gap.
  if (read.skipped > 0) throw new ForkRefusedError(ForkRefusalCode.FORK_CORRUPT, `the log holds ${read.skipped} entr${read.skipped > 1 ? 'ies' : 'y'} of kinds this bridle does not know; a fork would not copy ${read.skipped > 1 ? 'them' : 'it'}`);
  const plan = planFork(read.entries, read.lines, { id: o.id, now: new Date(o.clock()).toISOString(), ...(o.at !== undefined ? { at: o.at } : {}), ...(o.answer !== undefined ? { answer: o.answer } : {}) });
  if (!('ok' in plan)) throw new ForkRefusedError(plan.code, plan.message, plan.nearest);
  const existing = await o.store.tail(o.id);
  if (existing && existing.length > 0) throw new ForkRefusedError('FORK_EXISTS', `a session ${o.id} exists already; a fork needs an id of its own`);
  const log = o.store.open(o.id);
  try {
    if (log.ready) await log.ready;
    plan.entries.forEach((e, i) => log.append(e, plan.lines[i]!));
    await log.flush();
  } finally {
    await log.close();
  }
  const open = plan.entries.filter((e) => e.kind === 'turn/start').length > plan.entries.filter((e) => e.kind === 'turn/end').length;
  return { id: o.id, location: log.location, forkOf: plan.forkOf, entries: plan.entries, open, ...(plan.asks !== undefined ? { asks: plan.asks } : {}) };
}
