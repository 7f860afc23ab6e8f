/**
 * Forking a session log (ADR 0029): a new log that begins with the
 * original's lines up to a point where the session was at rest — after its
 * header, or after a turn's `turn/end` (with the checkpoint that belongs to
 * it) — copied byte for byte, under a header of its own that names the new
 * id and `forkOf`. Nothing is re-run: the copied lines are the outcomes.
 *
 * A what-if (`answer`) replaces one logged decision instead: the fork is cut
 * just before an `approval/decided` or a `session/input`, and the other
 * answer is written in its place, at the same seq — except an approval's
 * "approve": a what-if that would run a call is a question for whoever may
 * approve in the fork, never an approval by itself (ADR 0038), so nothing is
 * written in its place and the fork ends with the call asked, unanswered,
 * for the fork's own approval path to ask again.
 */
import { codes, type CodeOf } from './codes.js';
import { Entry, type Draft, type DraftOf, type EntryOf } from './entries.js';
import { verifyLog } from './verify.js';

/** A seq a fork can end at: the header, or the end of a turn (its checkpoint's seq when it has one). */
export interface ForkPoint {
  seq: number;
  /** The turn that ended there; null for the header alone. */
  after: string | null;
  /** That turn's `turn/end` (the header's seq for the header). */
  end: number;
}

/** Why a fork was refused: the point is inside a turn, past the log, not an answer, the answer unreadable, or the fork would not verify. */
export const ForkRefusalCode = codes({
  FORK_INSIDE_TURN: 'The point is inside a turn; the refusal names the nearest points to fork at.',
  FORK_NO_SUCH_SEQ: 'The point is no seq of the log.',
  FORK_NOT_AN_ANSWER: 'An answer was given for a point that asks no question.',
  FORK_BAD_ANSWER: 'The answer is not one the question accepts.',
  FORK_CORRUPT: 'The log does not begin with session/start, or the fork would not verify.',
});
export type ForkRefusalCode = CodeOf<typeof ForkRefusalCode>;

export interface ForkRefusal {
  code: ForkRefusalCode;
  message: string;
  /** The valid fork points nearest the one asked for (one before, one after, when they exist). */
  nearest?: ForkPoint[];
}

export interface ForkRequest {
  /** The fork's id. */
  id: string;
  /** The fork's point (default: the end of the log); with `answer`, the seq of the entry answered anew. */
  at?: number;
  /** What-if: `approve` / `deny` for an `approval/decided`, new text for a `session/input` (or the user message a turn took from one). */
  answer?: string;
  /** The `at` of the entries the fork writes itself (its header, the new answer). */
  now: string;
}

export interface ForkPlan {
  ok: true;
  /** The fork's entries and lines, in order; lines 2… up to `forkOf.seq` are the original's own. */
  entries: Entry[];
  lines: string[];
  forkOf: { session: string; seq: number };
  /** An approval answered `approve`: the call whose question the fork leaves open, to be asked again where it goes on (ADR 0038). */
  asks?: string;
}

type Start = EntryOf<'session/start'>;

/** Contract: pure; the rest points of a log, in order, the header first. */
export function forkPoints(entries: readonly Entry[]): ForkPoint[] {
  const out: ForkPoint[] = entries.length ? [{ seq: entries[0]!.seq, after: null, end: entries[0]!.seq }] : [];
  entries.forEach((e, i) => {
    if (e.kind !== 'turn/end') return;
    const next = entries[i + 1];
    out.push({ seq: next?.kind === 'checkpoint' && next.turn === e.turn ? next.seq : e.seq, after: e.turn, end: e.seq });
  });
  return out;
}

/** The turn open once the entry at `seq` is logged, if any (its `turn/end` closes it). */
function openTurnAt(entries: readonly Entry[], seq: number): { turn: string; seq: number } | undefined {
  let open: { turn: string; seq: number } | undefined;
  for (const e of entries) {
    if (e.seq > seq) break;
    if (e.kind === 'turn/start') open = { turn: e.turn, seq: e.seq };
    else if (e.kind === 'turn/end') open = undefined;
  }
  return open;
}

const describe = (p: ForkPoint) => `seq ${p.seq} (${p.after ? `after ${p.after}` : 'the header alone'})`;

function insideTurn(entries: readonly Entry[], seq: number, turn: { turn: string; seq: number }, what: string): ForkRefusal {
  const points = forkPoints(entries);
  const before = points.filter((p) => p.seq < turn.seq).at(-1);
  const after = points.find((p) => p.seq >= seq);
  const nearest = [before, after].filter((p): p is ForkPoint => p !== undefined);
  return {
    code: ForkRefusalCode.FORK_INSIDE_TURN,
    message: `${what}seq ${seq} is inside turn ${turn.turn} (it began at seq ${turn.seq}); fork at ${nearest.map(describe).join(' or ')}`,
    nearest,
  };
}

const APPROVE = new Set(['approve', 'allow', 'allowed-once', 'yes']);
const DENY = new Set(['deny', 'reject', 'rejected', 'no']);

const clip = (t: string) => JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t);

/** What `e` is, for a refusal: its kind, and for an input its text. */
const whatIs = (e: Entry) => (e.kind === 'session/input' || e.kind === 'user/message' ? `a ${e.kind} (${clip(e.text)})` : e.kind === 'turn/start' ? `a turn/start (${e.turn}, ${clip(e.input)})` : `a ${e.kind}`);

function notAnApproval(entries: readonly Entry[], e: Entry, answer: string): ForkRefusal {
  const decided = entries.filter((x) => x.kind === 'approval/decided').map((x) => x.seq);
  const where = decided.length > 0 ? `this log's approval answers are at seq ${decided.join(', ')}` : 'this log has none';
  return {
    code: ForkRefusalCode.FORK_NOT_AN_ANSWER,
    message: `seq ${e.seq} is ${whatIs(e)}, not an approval/decided: --answer ${answer} re-answers an approval (${where}); to replace an input with that word, write it otherwise (e.g. ${clip(`${answer}.`)})`,
  };
}

/**
 * The entry written in place of `e` (none for an approval answered `approve`: its question is left open), or a
 * refusal.
 */
function replacementFor(entries: readonly Entry[], e: Entry, answer: string): { at: Entry; draft?: Draft } | ForkRefusal {
  if (e.kind === 'approval/decided') {
    const a = answer.toLowerCase();
    if (!APPROVE.has(a) && !DENY.has(a)) return { code: ForkRefusalCode.FORK_BAD_ANSWER, message: `seq ${e.seq} is an approval answer: --answer approve or --answer deny, not ${JSON.stringify(answer)}` };
    // A no stays a no: it runs nothing. A yes is asked again of whoever may approve where the fork goes on.
    if (DENY.has(a)) return { at: e, draft: { kind: 'approval/decided', turn: e.turn, step: e.step, callId: e.callId, by: 'fork', outcome: 'rejected' } };
    return { at: e };
  }
  // An approval's answer at anything else is a mistaken seq, not new input text: never replace an input with "approve".
  if (APPROVE.has(answer.toLowerCase()) || DENY.has(answer.toLowerCase())) return notAnApproval(entries, e, answer);
  // A turn's input is the `session/input` its `turn/start` names: that is the entry replaced.
  const turnStart = e.kind === 'turn/start' ? e : e.kind === 'user/message' && e.origin === 'user' ? entries.find((t): t is EntryOf<'turn/start'> => t.kind === 'turn/start' && t.turn === e.turn) : undefined;
  const input = e.kind === 'session/input' ? e : entries.find((x): x is EntryOf<'session/input'> => x.kind === 'session/input' && turnStart?.from !== undefined && x.seq === turnStart.from);
  if (!input) {
    return { code: ForkRefusalCode.FORK_NOT_AN_ANSWER, message: `seq ${e.seq} is a ${e.kind}: --answer re-answers an approval/decided or replaces a session/input (or the user message a turn took from one)` };
  }
  const draft: DraftOf<'session/input'> = { kind: 'session/input', mode: input.mode, text: answer, origin: input.origin };
  return { at: input, draft };
}

/** The canonical line of a draft stamped at `seq`, as the recorder writes it. */
function stamp(draft: Draft, seq: number, at: string): { entry: Entry; line: string } {
  const entry = Entry.parse({ seq, at, ...draft });
  return { entry, line: JSON.stringify(entry) };
}

/**
 * Contract: pure; never throws for a schema-valid log whose `lines` are its entries' own lines and a non-empty
 * `id` (a caller's mistake in those throws a zod error). The plan's log verifies (a what-if of an approval
 * leaves its turn open, as a crash would: repairable by resume; an approve leaves the question itself open,
 * as a crash while it was asked would); anything else is a refusal naming why.
 */
export function planFork(entries: readonly Entry[], lines: readonly string[], req: ForkRequest): ForkPlan | ForkRefusal {
  const start = entries[0];
  if (start?.kind !== 'session/start') return { code: ForkRefusalCode.FORK_CORRUPT, message: 'the log does not begin with session/start' };
  const last = entries.at(-1)!.seq;
  if (req.at !== undefined && (req.at < 1 || req.at > last)) return { code: ForkRefusalCode.FORK_NO_SUCH_SEQ, message: `the log holds seq 1 to ${last}, not ${req.at}` };

  let keep: number;
  let replacement: Draft | undefined;
  let asks: string | undefined;
  if (req.answer !== undefined) {
    if (req.at === undefined) return { code: ForkRefusalCode.FORK_NOT_AN_ANSWER, message: '--answer needs --at: the seq of the approval answer or input it replaces' };
    const target = replacementFor(entries, entries.find((e) => e.seq === req.at)!, req.answer);
    if ('code' in target) return target;
    keep = target.at.seq - 1;
    replacement = target.draft;
    if (!target.draft && target.at.kind === 'approval/decided') asks = target.at.callId;
    // An input is replaced only where the session was at rest; a decision is re-answered inside its turn.
    const open = openTurnAt(entries, keep);
    if (target.draft?.kind === 'session/input' && open) return insideTurn(entries, target.at.seq, open, 'the input at ');
  } else {
    const at = req.at ?? last;
    const open = openTurnAt(entries, at);
    if (open && req.at !== undefined) return insideTurn(entries, at, open, 'the fork point ');
    // The last turn that ended at or before `at` (its checkpoint goes with it), else the header alone.
    keep = forkPoints(entries).filter((p) => p.end <= at).at(-1)!.seq;
  }

  const forkOf = { session: start.id, seq: keep };
  const { seq: _seq, at: _at, id: _id, forkOf: _parentFork, ...rest } = start as Start;
  const header = stamp({ ...rest, id: req.id, forkOf } as DraftOf<'session/start'>, 1, req.now);
  const copied = entries.filter((e) => e.seq > 1 && e.seq <= keep);
  const out: Entry[] = [header.entry, ...copied];
  const outLines = [header.line, ...lines.slice(1, copied.length + 1)];
  if (replacement) {
    const r = stamp(replacement, keep + 1, req.now);
    out.push(r.entry);
    outLines.push(r.line);
  }
  const verdict = verifyLog(out, { allowOpenTail: true });
  if (!verdict.ok) {
    const v = verdict.violations[0]!;
    return { code: ForkRefusalCode.FORK_CORRUPT, message: `the fork would not verify: ${v.violation} at seq ${v.seq ?? '?'}: ${v.message}` };
  }
  return { ok: true, entries: out, lines: outLines, forkOf, ...(asks !== undefined ? { asks } : {}) };
}

/** A log's lineage as its header states it: the session it was forked from, and where. */
export const forkOfLog = (entries: readonly Entry[]): { session: string; seq: number } | undefined => (entries[0]?.kind === 'session/start' ? entries[0].forkOf : undefined);
