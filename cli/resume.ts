/**
 * `bridle resume <session> [prompt]`: repair the log (a torn tail cut off, an
 * open turn closed without re-running anything), restore the session from
 * its newest checkpoint plus the tail, then run the prompt — or, with
 * `--continue`, ask the model to carry on with the interrupted work. With
 * neither, it only repairs.
 */
import { resumableTurn } from '../log/resumable.js';
import { existsSync } from 'node:fs';
import { readLogHeader } from '../adapters/store/jsonl-read.js';
import { LogFormatError } from '../log/errors.js';
import { repairJsonlLog, type ChildRepair, type FileRepair } from '../adapters/store/jsonl-repair.js';
import { acquireJsonlLock } from '../adapters/store/jsonl-lock.js';
import type { SessionStore, WriterLock } from '../ports/store.js';
import { takeoverDraft } from '../runtime/session.js';
import type { Entry } from '../log/entries.js';
import { formatRepairReport, repairedSomething, type RepairReport } from '../log/repair.js';
import { pendingInputs } from '../log/inputs.js';
import { LOG_FORMAT } from '../log/entries.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { UsageError } from './errors.js';
import { logAccessAsUsage } from './home.js';
import { parseStoredLines, targetOf, type StoreTarget } from './session-store.js';
import { Recorder } from '../log/recorder.js';
import { planRepair } from '../log/repair.js';
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
    if (c.outcome.kind === 'missing') err.write(`subagent ${c.child}: no log at ${c.path}; nothing to repair\n`);
    else if (c.outcome.kind === 'refused') {
      refused++;
      for (const v of c.outcome.violations) err.write(`bridle: subagent log ${c.path} is corrupt or unreadable; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
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
  const where = targetOf(first.rows, first.home, target);
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
  open: { session: string; lock: WriterLock; store?: SessionStore };
}

/**
 * Takes the session's writer's claim (the lock, or the lease: an expired one taken over and said in the log
 * before anything else), repairs its log as `resume` does (nothing re-run), says what it repaired on `err`,
 * and hands back the entries with the claim still held. Contract: a number (2) when the log or one of its
 * subagent logs is refused as corrupt (said on `err`, the claim released); throws `UsageError` for a log that
 * is not there or cannot be opened, `SessionLockedError` while another live writer holds it (the claim is
 * released on every failure).
 */
export async function repairForResume(where: StoreTarget, target: string, err: { write(s: string): unknown }): Promise<RepairedSession | number> {
  if (where.kind === 'postgres') return resumeStored(where, target, err);
  const path = where.path;
  if (!existsSync(path)) throw new UsageError(`no session log at ${path}`);
  // Repair appends: it is a writer, and takes the lock before it reads (a live writer is refused, naming it).
  let lock: WriterLock;
  try {
    lock = acquireJsonlLock(path);
  } catch (e) {
    logAccessAsUsage(e);
  }
  let out: RepairedSession | number | undefined;
  try {
    out = await resumeLocked(path, target, err, lock);
    return out;
  } finally {
    if (typeof out !== 'object') lock.release();
  }
}

/** The format its `session/start` names, read from the first line alone; undefined when that line is not one (repair says why). */
function headerFormat(path: string): number | undefined {
  // Only a regular file, opened without blocking (a FIFO is refused here, and by repair after, naming it).
  const head = readLogHeader(path);
  return head?.kind === 'session/start' && typeof head.format === 'number' ? head.format : undefined;
}

async function resumeLocked(path: string, target: string, err: { write(s: string): unknown }, lock: WriterLock): Promise<RepairedSession | number> {
  // An older log is refused before repair touches it: it logged no inputs, so what it had queued cannot be known (ADR 0021).
  const format = headerFormat(path);
  if (format !== undefined && format < LOG_FORMAT) {
    err.write(`bridle: ${path} ${new LogFormatError(format, LOG_FORMAT, 'resuming it').message}\n`);
    return 2;
  }
  let repaired: FileRepair;
  try {
    // A turn left waiting on an approval stays open: the session goes on with it and asks again (ADR 0027).
    repaired = await repairJsonlLog(path, Date.now, { first: takeoverDraft(lock), keepPending: true });
  } catch (e) {
    logAccessAsUsage(e);
  }
  if (lock.tookOver) err.write(`took over: pid ${lock.tookOver.pid} on ${lock.tookOver.host} held this session's lock (since ${lock.tookOver.since}) and is gone\n`);
  if (!repaired.ok) {
    for (const v of repaired.violations) err.write(`bridle: ${path} is corrupt, not just cut short; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
    return 2;
  }
  return reported(repaired, path, target, err, { session: path, lock });
}

/**
 * Resume of a session in the Postgres store (ADR 0025): the lease first (an expired one taken over, and said
 * in the log before anything else), then the same repair as for JSONL through the store, committed before
 * anything runs; the session then goes on under the same lease.
 */
async function resumeStored(where: { store: SessionStore; id: string }, _target: string, err: { write(s: string): unknown }): Promise<RepairedSession | number> {
  const { store, id } = where;
  const lock = await store.claim!(id);
  let out: RepairedSession | number | undefined;
  try {
    const lines = await store.tail!(id);
    // `postgres://host/db#id`: what `resume` and `replay` take back, and never with a password in it.
    const location = lock.location;
    if (!lines || lines.length === 0) throw new UsageError(`no session ${id} at ${location}`);
    const read = parseStoredLines(lines);
    const plan = read.ok ? planRepair(read.entries, { keepPending: true }) : read;
    if (lock.tookOver) err.write(`took over: pid ${lock.tookOver.pid} on ${lock.tookOver.host} held this session's lease (since ${lock.tookOver.since}) and it expired\n`);
    if (!read.ok || !plan.ok) {
      for (const v of plan.ok ? [] : plan.violations) err.write(`bridle: session ${id} is corrupt; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
      return 2;
    }
    const drafts = [...takeoverDraft(lock), ...plan.drafts];
    const log = store.open(id, { lock });
    const recorder = new Recorder(log, Date.now, read.entries);
    const appended = drafts.map((d) => recorder.append(d));
    // Committed, not closed: closing would end the lease the session goes on under.
    if (appended.length) await recorder.flush();
    const children = await repairStoredChildren(store, [...plan.report.subagents, ...(plan.report.cancelled ?? [])], err);
    const repaired = { ok: true as const, entries: recorder.entries.slice(), appended, report: plan.report, children: [] };
    if (children > 0) {
      err.write(`bridle: ${children} subagent session${children > 1 ? 's' : ''} of this session could not be repaired (above); the session itself was repaired, nothing was run\n`);
      return 2;
    }
    out = reported(repaired, location, location, err, { session: location, lock, store });
    return out;
  } finally {
    if (typeof out !== 'object') lock.release();
  }
}

/** The children an open `subagent/start` names, each repaired under its own lease; returns how many could not be. */
async function repairStoredChildren(store: SessionStore, children: readonly string[], err: { write(s: string): unknown }): Promise<number> {
  let refused = 0;
  for (const child of children) {
    let lock: WriterLock;
    try {
      lock = await store.claim!(child);
    } catch (e) {
      refused++;
      err.write(`bridle: subagent session ${child} cannot be repaired: ${visible((e as Error).message)}\n`);
      continue;
    }
    const log = store.open(child, { lock });
    try {
      const lines = await store.tail!(child);
      if (!lines || lines.length === 0) {
        err.write(`subagent ${child}: no session in the store; nothing to repair\n`);
        continue;
      }
      const read = parseStoredLines(lines);
      const plan = read.ok ? planRepair(read.entries, {}) : read;
      if (!read.ok || !plan.ok) {
        refused++;
        for (const v of plan.ok ? [] : plan.violations) err.write(`bridle: subagent session ${child} is corrupt; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
        continue;
      }
      const recorder = new Recorder(log, Date.now, read.entries);
      for (const d of plan.drafts) recorder.append(d);
      if (repairedSomething(plan.report)) for (const l of formatRepairReport(plan.report)) err.write(`repaired: subagent ${child}: ${visible(l)}\n`);
      refused += await repairStoredChildren(store, [...plan.report.subagents, ...(plan.report.cancelled ?? [])], err);
    } finally {
      await log.close();
    }
  }
  return refused;
}

/** Says what was repaired, down the tree of subagent logs; 2 when one of those was refused. */
function reported(repaired: Extract<FileRepair, { ok: true }>, path: string, target: string, err: { write(s: string): unknown }, open: RepairedSession['open']): RepairedSession | number {
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
  const maxSteps = (product.rows.find((r) => r.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
  const snapshot = restoreSessionSnapshot(entries, maxSteps !== undefined ? { maxSteps } : {});
  // No `--cwd`: the session runs in the workspace its log says (ADR 0041), which may have moved since its start.
  const runFlags: RunFlags = { ...flags, session: open.session };
  const text = prompt ?? (flags.continue ? continueNote(report, entries) : undefined);
  // A turn its host left waiting on a spent budget's question is asked again, on the terminal (ADR 0047).
  const atBudget = resumableTurn(entries)?.budget === true;
  return runPrompt(text, product, runFlags, { existing: entries, snapshot, lock: open.lock, ...(open.store ? { store: open.store } : {}), ...(atBudget ? { askOnBudget: true } : {}) }, prompt === undefined ? 'resume' : undefined);
}
