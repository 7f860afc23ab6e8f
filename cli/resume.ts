/**
 * `bridle resume <session> [prompt]`: repair the log (a torn tail cut off, an
 * open turn closed without re-running anything), restore the session from
 * its newest checkpoint plus the tail, then run the prompt — or, with
 * `--continue`, ask the model to carry on with the interrupted work. With
 * neither, it only repairs.
 */
import { resumableTurn } from '../log/resumable.js';
import { LogAccessError } from '../log/errors.js';
import type { SessionStore, WriterLock } from '../ports/store.js';
import { takeoverDraft } from '../runtime/session.js';
import type { Entry } from '../log/entries.js';
import { formatRepairReport, repairedSomething, type RepairReport } from '../log/repair.js';
import { pendingInputs } from '../log/inputs.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { noSession, SessionLogError } from '../runtime/logs/open.js';
import { repairSession, type ChildRepair, type SessionRepair } from '../runtime/logs/repair.js';
import { sessionOfRef, type SessionRef } from '../runtime/stores.js';
import { UsageError } from './errors.js';
import { loopChange, productLoop } from '../runtime/loop-identity.js';
import { logAccessAsUsage } from './home.js';
import { runPrompt, type RunFlags } from './run.js';
import { composeProduct } from './settings.js';
import { visible } from './visible.js';
import { continueRalph } from './ralph.js';
import { ralphState } from '../runtime/ralph/state.js';

export interface ResumeFlags extends Omit<RunFlags, 'session'> {
  continue?: boolean;
}

/** The harness's note for `--continue`; logged as a `user/message` with origin `resume`, so the model reads it as the harness speaking. */
export function continueNote(r: RepairReport, entries: readonly Entry[] = []): string {
  const lines = ['This session was interrupted and has now been resumed.'];
  if (r.turn) lines.push(`Turn ${r.turn} did not finish; the harness closed it and re-ran nothing.`);
  if (r.notStarted.length) lines.push(`Never started (they did not run): ${r.notStarted.join(', ')}.`);
  // A what-if fork (ADR 0029): the answer the fork gave is why the turn stopped there; the call has not run.
  const answered = entries.filter((e): e is Extract<Entry, { kind: 'approval/decided' }> => e.kind === 'approval/decided' && e.by === 'fork' && r.notStarted.includes(e.callId));
  for (const a of answered) {
    const call = entries.find((e): e is Extract<Entry, { kind: 'tool/call' }> => e.kind === 'tool/call' && e.callId === a.callId);
    if (!call) continue;
    if (a.outcome.startsWith('allowed')) lines.push(`This session is a fork in which ${a.callId} (${call.name} ${call.arguments}) is approved: it has not run yet; call it again to run it.`);
    else lines.push(`This session is a fork in which ${a.callId} (${call.name} ${call.arguments}) was denied: it did not run.`);
  }
  if (r.outcomeUnknown.length) {
    lines.push(`Outcome unknown (they were running when the session stopped): ${r.outcomeUnknown.map((c) => `${c.callId} ${c.name}${c.idempotent ? ', idempotent' : ''}`).join('; ')}.`);
    lines.push('Re-run only read-only or idempotent work; for anything else, check the current state first.');
  }
  lines.push('Carry on with the interrupted work, if anything is left to do.');
  return lines.join('\n');
}

const at = (v: { violation: string; seq: number | null; line?: number }) => `${v.violation} at ${v.seq !== null ? `seq ${v.seq}` : `line ${v.line ?? '?'}`}`;

/** One line per child repaired or refused, down the tree; returns how many were refused. */
function reportChildren(children: readonly ChildRepair[], err: { write(s: string): unknown }): number {
  let refused = 0;
  for (const c of children) {
    if (c.outcome.kind === 'missing') err.write(`subagent ${c.child}: no log at ${c.location}; nothing to repair\n`);
    else if (c.outcome.kind === 'refused') {
      refused++;
      for (const v of c.outcome.violations) err.write(`bridle: subagent log ${c.location} is corrupt or unreadable; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
    } else {
      const r = c.outcome.repair;
      if (repairedSomething(r.report)) for (const l of formatRepairReport(r.report)) err.write(`repaired: subagent ${c.child}: ${visible(l)}\n`);
      refused += reportChildren(r.children, err);
    }
  }
  return refused;
}

export async function resumeCommand(target: string, prompt: string | undefined, flags: ResumeFlags, err: { write(s: string): unknown } = process.stderr): Promise<number> {
  if (prompt !== undefined && flags.continue) throw new UsageError('give a prompt or --continue, not both');
  // A bad flag, config file or row fails before the log is touched.
  const first = await composeProduct(flags);
  const where = sessionOfRef(first.rows, first.home, target);
  const r = await repairForResume(where, target, err);
  if (typeof r === 'number') return r;
  try {
    return await carryOn(r, prompt, flags, err);
  } finally {
    // Idempotent: a session that ran has released it on close already.
    r.open.lock.release();
  }
}

/** A session repaired for going on (`resume`, or `serve` asked for a session it does not hold): its writer's claim held. */
export interface RepairedSession {
  entries: Entry[];
  report: RepairReport;
  /** Where the log is, for messages (`postgres://host/db#id` or the file). */
  path: string;
  /** What the user named it as, for the hints printed. */
  target: string;
  /** How to open it: the `session` to name, the claim held (the caller releases it, or the session's close does), the store that issued it. */
  open: { session: string; lock: WriterLock; store: SessionStore };
}

/**
 * Takes the session's writer's claim (the lock, or the lease: a stale one taken over and said in the log
 * before anything else), repairs its log as `resume` does (nothing re-run, `runtime/logs/repair.ts`), says
 * what it repaired on `err`, and hands back the entries with the claim still held. Contract: a number (2) when
 * the log or one of its subagent logs is refused as corrupt (said on `err`, the claim released); throws
 * `UsageError` for a log that is not there or cannot be opened, `SessionLockedError` while another live writer
 * holds it (the claim is released on every failure).
 */
export async function repairForResume(where: SessionRef, _target: string, err: { write(s: string): unknown }): Promise<RepairedSession | number> {
  const { store, id } = where;
  const location = store.locate(id);
  // Repair appends: it is a writer, and takes the claim before it reads (a live writer is refused, naming it).
  let lock: WriterLock;
  try {
    lock = await claimToRepair(store, id);
  } catch (e) {
    if (e instanceof SessionLogError) throw new UsageError(e.message, { cause: e });
    logAccessAsUsage(e);
  }
  let out: RepairedSession | number | undefined;
  try {
    let repaired: SessionRepair | undefined;
    try {
      // A turn left waiting on an approval stays open: the session goes on with it and asks again (ADR 0027).
      repaired = await repairSession(store, id, lock, Date.now, { first: takeoverDraft(lock), keepPending: true });
    } catch (e) {
      logAccessAsUsage(e);
    }
    if (!repaired) throw new UsageError(noSession(store, id).message);
    const old = !repaired.ok && repaired.violations[0]?.violation === 'format-old' ? repaired.violations[0] : undefined;
    if (old) {
      err.write(`bridle: ${location} ${old.message}\n`);
      return 2;
    }
    if (lock.tookOver) err.write(`took over: pid ${lock.tookOver.pid} on ${lock.tookOver.host} held this session's claim (since ${lock.tookOver.since}) and is gone\n`);
    if (!repaired.ok) {
      for (const v of repaired.violations) err.write(`bridle: ${location} is corrupt, not just cut short; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
      return 2;
    }
    out = reported(repaired, location, location, err, { session: location, lock, store });
    return out;
  } finally {
    if (typeof out !== 'object') lock.release();
  }
}

/** The claim a repair takes: a log that is not there is said as such, not as a claim that could not be written beside it. */
async function claimToRepair(store: SessionStore, id: string): Promise<WriterLock> {
  try {
    return await store.claim(id);
  } catch (e) {
    if (e instanceof LogAccessError && !(await store.read(id).catch(() => undefined))) throw noSession(store, id);
    throw e;
  }
}

/** Says what was repaired, down the tree of subagent logs; 2 when one of those was refused. */
function reported(repaired: Extract<SessionRepair, { ok: true }>, path: string, target: string, err: { write(s: string): unknown }, open: RepairedSession['open']): RepairedSession | number {
  const { entries, report } = repaired;
  if (repairedSomething(report)) for (const l of formatRepairReport(report)) err.write(`repaired: ${visible(l)}\n`);
  else err.write(`log: ${path} needed no repair\n`);
  // A child left open by the crash was repaired with its parent; one that could not be is reported, and nothing runs.
  const refused = reportChildren(repaired.children, err);
  if (refused > 0) {
    err.write(`bridle: ${refused} subagent log${refused > 1 ? 's' : ''} of this session could not be repaired (above); the session itself was repaired, nothing was run\n`);
    return 2;
  }
  return { entries, report, path, target, open };
}

async function carryOn(r: RepairedSession, prompt: string | undefined, flags: ResumeFlags, err: { write(s: string): unknown }): Promise<number> {
  const { entries, report, path, target, open } = r;
  // A Ralph run's log: it goes on with the round (or the check) it was in; there is no prompt to give it.
  if (ralphState(entries)) {
    if (prompt !== undefined) throw new UsageError('this is a Ralph run\'s log: resume continues it from its own log, without a prompt');
    return continueRalph(path, entries, flags, open.lock, err);
  }
  const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
  // Input the log holds that no turn took runs first, once, in the order it arrived (ADR 0021).
  const queued = pendingInputs(entries);
  if (queued.length > 0) err.write(`queued: ${queued.length} input${queued.length > 1 ? 's' : ''} the session received and never ran, now run in order\n`);
  // A call left waiting on an approval is asked again as the session opens, before anything queued (ADR 0027).
  const pending = report.pending ?? [];
  if (pending.length > 0) err.write(`pending: ${pending.length === 1 ? 'a call' : `${pending.length} calls`} waiting on an approval when the session stopped (${pending.join(', ')}), asked again now; nothing of it ran\n`);
  // A call answered and not dispatched goes on with its logged answer, not asked again (ADR 0031): a fork's new answer, or a crash after the answer.
  const decided = report.decided ?? [];
  if (decided.length > 0) err.write(`decided: ${decided.map((d) => `${d.callId} ${d.outcome}`).join(', ')} — answered when the log stopped, not dispatched; the turn goes on with ${decided.length === 1 ? 'that answer' : 'those answers'}\n`);
  if (prompt === undefined && !flags.continue && queued.length === 0 && pending.length === 0 && decided.length === 0) {
    err.write(`resume with a prompt, or with --continue to let the model carry on: bridle resume ${target} --continue\n`);
    return 0;
  }
  // The model the session logged, unless a flag, the environment or a profile names another.
  const product = await composeProduct(flags, { loggedModel: start.model });
  // The session goes on in the loop it ran, or not at all (ADR 0088): replay's refusal, before anything runs.
  const changed = loopChange(start.loop, productLoop(product.rows, product.loaded)?.identity);
  if (changed) {
    err.write(`bridle: ${changed.code}: ${visible(changed.message)}; resume with the product that ran it (its --profile or --patch)\n`);
    return 2;
  }
  const maxSteps = (product.rows.find((r) => r.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
  const snapshot = restoreSessionSnapshot(entries, maxSteps !== undefined ? { maxSteps } : {});
  // No `--cwd`: the session runs in the workspace its log says (ADR 0041), which may have moved since its start.
  const runFlags: RunFlags = { ...flags, session: open.session };
  const text = prompt ?? (flags.continue ? continueNote(report, entries) : undefined);
  // A turn its host left waiting on a spent budget's question is asked again, on the terminal (ADR 0047).
  const atBudget = resumableTurn(entries)?.budget === true;
  return runPrompt(text, product, runFlags, { existing: entries, snapshot, lock: open.lock, store: open.store, ...(atBudget ? { askOnBudget: true } : {}) }, prompt === undefined ? 'resume' : undefined);
}
