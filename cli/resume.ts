/**
 * `bridle resume <session> [prompt]`: repair the log (a torn tail cut off, an
 * open turn closed without re-running anything), restore the session from
 * its newest checkpoint plus the tail, then run the prompt — or, with
 * `--continue`, ask the model to carry on with the interrupted work. With
 * neither, it only repairs.
 */
import { closeSync, existsSync, readSync } from 'node:fs';
import { openLogForReading } from '../adapters/store/jsonl-read.js';
import { LogFormatError } from '../log/errors.js';
import { repairJsonlLog, type ChildRepair, type FileRepair } from '../adapters/store/jsonl-repair.js';
import { acquireJsonlLock } from '../adapters/store/jsonl-lock.js';
import type { WriterLock } from '../ports/store.js';
import { takeoverDraft } from '../runtime/session.js';
import type { Entry } from '../log/entries.js';
import { formatRepairReport, repairedSomething, type RepairReport } from '../log/repair.js';
import { pendingInputs } from '../log/inputs.js';
import { LOG_FORMAT } from '../log/entries.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage, sessionPath } from './home.js';
import { runPrompt, type RunFlags } from './run.js';
import { composeProduct } from './settings.js';
import { visible } from './visible.js';
import { continueRalph } from './ralph.js';
import { ralphState } from '../runtime/ralph/state.js';

export interface ResumeFlags extends Omit<RunFlags, 'session'> {
  continue?: boolean;
}

/** The harness's note for `--continue`; logged as a `user/message` with origin `resume`, so the model reads it as the harness speaking. */
export function continueNote(r: RepairReport): string {
  const lines = ['This session was interrupted and has now been resumed.'];
  if (r.turn) lines.push(`Turn ${r.turn} did not finish; the harness closed it and re-ran nothing.`);
  if (r.notStarted.length) lines.push(`Never started (they did not run): ${r.notStarted.join(', ')}.`);
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
  await composeProduct(flags);
  const path = sessionPath(bridleHome(), target);
  if (!existsSync(path)) throw new UsageError(`no session log at ${path}`);
  // Repair appends: it is a writer, and takes the lock before it reads (a live writer is refused, naming it).
  let lock: WriterLock;
  try {
    lock = acquireJsonlLock(path);
  } catch (e) {
    logAccessAsUsage(e);
  }
  try {
    return await resumeLocked(path, target, prompt, flags, err, lock);
  } finally {
    // Idempotent: a session that ran has released it on close already.
    lock.release();
  }
}

/** The format its `session/start` names, read from the first line alone; undefined when that line is not one (repair says why). */
function headerFormat(path: string): number | undefined {
  let fd: number;
  try {
    // Only a regular file, opened without blocking (a FIFO is refused here, and by repair after, naming it).
    fd = openLogForReading(path);
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const line = buf.subarray(0, n).toString('utf8').split('\n', 1)[0]!;
    const head = JSON.parse(line) as { kind?: unknown; format?: unknown };
    return head.kind === 'session/start' && typeof head.format === 'number' ? head.format : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

async function resumeLocked(path: string, target: string, prompt: string | undefined, flags: ResumeFlags, err: { write(s: string): unknown }, lock: WriterLock): Promise<number> {
  // An older log is refused before repair touches it: it logged no inputs, so what it had queued cannot be known (ADR 0021).
  const format = headerFormat(path);
  if (format !== undefined && format < LOG_FORMAT) {
    err.write(`bridle: ${path} ${new LogFormatError(format, LOG_FORMAT, 'resuming it').message}\n`);
    return 2;
  }
  let repaired: FileRepair;
  try {
    repaired = await repairJsonlLog(path, Date.now, { first: takeoverDraft(lock) });
  } catch (e) {
    logAccessAsUsage(e);
  }
  if (lock.tookOver) err.write(`took over: pid ${lock.tookOver.pid} on ${lock.tookOver.host} held this session's lock (since ${lock.tookOver.since}) and is gone\n`);
  if (!repaired.ok) {
    for (const v of repaired.violations) err.write(`bridle: ${path} is corrupt, not just cut short; refusing to repair it: ${at(v)}: ${visible(v.message)}\n`);
    return 2;
  }
  const { entries, report } = repaired;
  if (repairedSomething(report)) for (const l of formatRepairReport(report)) err.write(`repaired: ${visible(l)}\n`);
  else err.write(`log: ${path} needed no repair\n`);
  // A child left open by the crash was repaired with its parent; one that could not be is reported, and nothing runs.
  const refused = reportChildren(repaired.children, err);
  if (refused > 0) {
    err.write(`bridle: ${refused} subagent log${refused > 1 ? 's' : ''} of this session could not be repaired (above); the session itself was repaired, nothing was run\n`);
    return 2;
  }
  // A Ralph run's log: it goes on with the round (or the check) it was in; there is no prompt to give it.
  if (ralphState(entries)) {
    if (prompt !== undefined) throw new UsageError('this is a Ralph run\'s log: resume continues it from its own log, without a prompt');
    return continueRalph(path, entries, flags, lock, err);
  }
  const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
  // Input the log holds that no turn took runs first, once, in the order it arrived (ADR 0021).
  const queued = pendingInputs(entries);
  if (queued.length > 0) err.write(`queued: ${queued.length} input${queued.length > 1 ? 's' : ''} the session received and never ran, now run in order\n`);
  if (prompt === undefined && !flags.continue && queued.length === 0) {
    err.write(`resume with a prompt, or with --continue to let the model carry on: bridle resume ${target} --continue\n`);
    return 0;
  }
  // The model the session logged, unless a flag, the environment or a profile names another.
  const product = await composeProduct(flags, { loggedModel: start.model });
  const maxSteps = (product.rows.find((r) => r.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
  const snapshot = restoreSessionSnapshot(entries, maxSteps !== undefined ? { maxSteps } : {});
  const runFlags: RunFlags = { ...flags, session: path, cwd: flags.cwd ?? start.cwd };
  const text = prompt ?? (flags.continue ? continueNote(report) : undefined);
  return runPrompt(text, product, runFlags, { existing: entries, snapshot, lock }, prompt === undefined ? 'resume' : undefined);
}
