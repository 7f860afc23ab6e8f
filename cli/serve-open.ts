/**
 * How `bridle serve` opens the sessions it hosts: a client's `session/create`
 * (exactly as `bridle run` would, a client's scripted model checked before it
 * is read), a `session/fork` written to the store, and a session of the
 * store this process does not host (repaired as `bridle resume` would). A
 * failure reaches the client as a refusal it may read; what could quote a
 * file goes to the server's log only.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkCwd } from '../server/allowed-cwd.js';
import type { OpenSession, SessionHooks } from '../server/hosted-session.js';
import type { ForkLog } from '../server/hub-limits.js';
import { ErrorCode, refusal, Reason } from '../server/protocol.js';
import { LoopChangedError, SessionNotSavedError, SetupError, UsageError, WorkspaceModuleError } from './errors.js';
import { SessionLockedError } from '../log/errors.js';
import { PolicyWidenedError } from '../runtime/session-policy.js';
import { type ComposedRow } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { applySettings } from '../runtime/settings.js';
import { openSession, SessionExistsError } from './open-session.js';
import { forkSession } from '../runtime/logs/fork.js';
import { resumableTurn } from '../log/resumable.js';
import { freshSessionId } from '../runtime/catalogue.js';
import { repairForResume } from './resume.js';
import { sessionOfRef } from '../runtime/stores.js';
import type { SessionRelay } from '../ports/relay.js';
import { refuseBeforeClaim } from './serve-preflight.js';
import type { Entry } from '../log/entries.js';
import { loggedWorkspace } from '../runtime/session-policy.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { ralphState } from '../runtime/ralph/state.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { Product } from './settings.js';

/** The server's `open`: a client's `session/create`, in `params.cwd` (checked by the hub) or the server's workspace. */
export function serveOpener(product: Product, workspace: string, problem: (m: string) => void): OpenSession {
  return async (params, hooks) => {
    if (params.model?.startsWith('scripted:')) checkClientScript(params.model, problem);
    const model = params.model;
    try {
      return (await openSession({
        product,
        cwd: params.cwd ?? workspace,
        // A fork `session/fork` just wrote is opened as the session it is.
        session: params.fork,
        answerer: hooks.answerer,
        inspect: hooks.inspect,
        askOnBudget: hooks.askOnBudget,
        traceparent: params.traceparent,
        ...(params.id !== undefined || params.depth !== undefined || params.parent !== undefined
          ? { lineage: { id: params.id, depth: params.depth ?? 0, parent: params.parent ?? null } }
          : {}),
        // A client's model is sugar over the model row, as a flag's would be.
        ...(model ? { rows: (rows: ComposedRow[]) => applySettings(rows, [{ from: 'client', settings: { model } }]).rows } : {}),
      })).session;
    } catch (e) {
      throw openRefusal(e, model ?? modelOf(product), problem);
    }
  };
}

/** The server's `fork`: `session/fork` written to the store the session's id names. */
export function serveFork(product: Product): ForkLog {
  return async (p) => {
    const { store, id } = sessionOfRef(product.rows, product.home, p.sessionId);
    const f = await forkSession({ store, session: id, id: freshSessionId(), clock: Date.now, ...(p.at !== undefined ? { at: p.at } : {}), ...(p.answer !== undefined ? { answer: p.answer } : {}) });
    return { id: f.id, forkOf: f.forkOf, open: f.open, resumable: f.open && resumableTurn(f.entries) !== undefined };
  };
}

/** A script is a small JSON file; anything past this is not one. */
const MAX_SCRIPT_BYTES = 16 * 1024 * 1024;

const unusableScript = (model: string) =>
  refusal(ErrorCode.CreateFailed, Reason.MODEL_UNAVAILABLE, `model ${JSON.stringify(model)} is not a readable, valid scripted-model script (the server's log says why)`);

/**
 * A client may name any path as `scripted:<path>`, and reading a device, a
 * FIFO or a /proc file (size 0, however much it yields) could block the
 * server's one thread or fill its memory: only a non-empty regular file of
 * at most 16 MiB is read. (The operator's own `--model` is not checked.)
 */
function checkClientScript(model: string, problem: (m: string) => void): void {
  const file = resolve(model.slice('scripted:'.length));
  let why: string | undefined;
  try {
    const st = statSync(file);
    if (!st.isFile()) why = 'not a regular file';
    else if (st.size === 0) why = 'empty, or a file that reports no size';
    else if (st.size > MAX_SCRIPT_BYTES) why = `larger than ${MAX_SCRIPT_BYTES} bytes`;
  } catch (err) {
    why = (err as Error).message;
  }
  if (why === undefined) return;
  problem(`session/create: script ${file}: ${why}`);
  throw unusableScript(model);
}

/**
 * Why a session could not be opened, in words a client may read. A scripted
 * model's load errors quote the file (JSON.parse and zod show what they
 * read), and a client may name any file: only the server's log gets those.
 */
function openRefusal(err: unknown, model: string | undefined, problem: (m: string) => void, what = 'session/create'): unknown {
  // Another process writes that session, or its log cannot be saved: said as such, not as a model problem.
  if (err instanceof SessionLockedError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_LOCKED, err.message));
  if (err instanceof SessionNotSavedError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_SAVED, err.message));
  if (err instanceof SessionExistsError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_EXISTS, 'a session with that id exists already'));
  if (!(err instanceof UsageError || err instanceof SetupError || err instanceof CompositionError)) return err;
  problem(`${what}: ${err.message}`);
  // A logged policy this server's flags would widen (ADR 0027): said as such, not as a model problem.
  if (err.cause instanceof PolicyWidenedError) return refusal(ErrorCode.CreateFailed, Reason.POLICY_WIDENED, err.message);
  // A row module inside the session's workspace (ADR 0087): said as such, not as a model problem.
  if (err instanceof WorkspaceModuleError) return refusal(ErrorCode.CreateFailed, Reason.WORKSPACE_MODULE, err.message);
  // A stored session whose log ran another loop than this server's (ADR 0096): said by its code.
  if (err instanceof LoopChangedError) return refusal(ErrorCode.CreateFailed, Reason[err.code], err.message);
  if (model?.startsWith('scripted:')) return unusableScript(model);
  return refusal(ErrorCode.CreateFailed, Reason.MODEL_UNAVAILABLE, err.message);
}

/** What a session id a client names may look like (as the ids seam makes them): never a path, never a URL. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/**
 * A session of the server's store that this process does not host (a predecessor's, one closed here, one
 * `bridle run` left): its writer's claim taken (a dead holder's taken over, a live one's refused naming it),
 * its log repaired exactly as `bridle resume` repairs it (nothing re-run), then opened from its newest
 * checkpoint under the same claim, with the server's hooks; input it had queued runs first. It runs on the
 * server's own product (model, sandbox, approval), in the directory its log names, which must be one the
 * server allows. Resolves undefined when the store has no such session.
 */
export async function reopenStored(product: Product, sessionId: string, hooks: SessionHooks, roots: readonly string[], problem: (m: string) => void, relay: SessionRelay | undefined): Promise<BridleSession | undefined> {
  if (!SESSION_ID.test(sessionId) || sessionId.endsWith('.jsonl')) return undefined;
  const where = sessionOfRef(product.rows, product.home, sessionId);
  if ((await where.store.tail(sessionId, Number.MAX_SAFE_INTEGER)) === undefined) return undefined;
  // A session this server could not run is refused before its claim, its lease left to a worker that can (ADR 0042).
  await refuseBeforeClaim(product, where, roots, relay);
  const said: string[] = [];
  const notes = { write: (l: string) => (said.push(l.trimEnd()), true) };
  const notResumable = (why: string) => refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_RESUMABLE, `session ${sessionId} cannot be resumed here: ${why}`);
  let r: Awaited<ReturnType<typeof repairForResume>>;
  try {
    r = await repairForResume(where, sessionId, notes);
  } catch (e) {
    for (const l of said) problem(`session ${sessionId}: ${l}`);
    if (e instanceof SessionLockedError) throw refusal(ErrorCode.CreateFailed, Reason.SESSION_LOCKED, e.message);
    if (e instanceof UsageError) throw notResumable(e.message);
    throw e;
  }
  for (const l of said) problem(`session ${sessionId}: ${l}`);
  if (typeof r === 'number') throw notResumable("its log (or a subagent's) is corrupt; the server's log says where");
  const { entries, open } = r;
  try {
    const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
    if (ralphState(entries)) throw notResumable('it is a Ralph run; continue it with bridle resume');
    // Where its log says it runs now (a `--move-workspace` may have moved it since its start).
    const cwd = checkCwd(loggedWorkspace(entries) ?? start.cwd, roots);
    if (!cwd.ok) throw notResumable(`its directory is not one this server allows (${cwd.reason})`);
    const maxSteps = (product.rows.find((row) => row.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
    const snapshot = restoreSessionSnapshot(entries, maxSteps !== undefined ? { maxSteps } : {});
    return (await openSession({
      product,
      cwd: cwd.cwd,
      session: open.session,
      existing: entries,
      snapshot,
      lock: open.lock,
      store: open.store,
      answerer: hooks.answerer,
      inspect: hooks.inspect,
      askOnBudget: hooks.askOnBudget,
    })).session;
  } catch (e) {
    open.lock.release();
    throw openRefusal(e, modelOf(product), problem, `session ${sessionId}: opening it from the store (an attach, an input or a takeover)`);
  }
}

/** The model the product's `model` row names, as a `--model` would (`scripted:<file>` or the id). */
function modelOf(product: Product): string | undefined {
  const row = product.rows.find((r) => r.id === 'model');
  const c = row?.config as { model?: string; file?: string } | undefined;
  return row?.use === 'scripted' ? `scripted:${c?.file}` : c?.model;
}
