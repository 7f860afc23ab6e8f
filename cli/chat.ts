/**
 * `bridle chat`: a plain line-based REPL over one session. Each line is a
 * prompt (queued if a turn is running); answers stream; approvals are asked
 * inline and answered on the next line; `/compact` compacts the context;
 * Ctrl-C cancels the running turn; Ctrl-D (end of input) exits once the
 * running turn is done.
 */
import { createInterface } from 'node:readline';
import type { Answerer } from '../ports/approval.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import { openSession, type OpenedSession } from './open-session.js';
import { createRenderer, mcpNotes, skillNotes } from './render.js';
import type { RunFlags } from './run.js';
import { APPROVAL } from '../ports/index.js';
import type { Product } from './settings.js';
import { approvalQuestion } from './terminal-answerer.js';
import { visible } from './visible.js';
import { closeSaying, crashedLine, entryToShow, unsavedTurnLine } from './save-failure.js';
import { SessionCrashedError } from '../runtime/session-fault.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import { progressPrinter } from './progress-line.js';

export interface ChatIO {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream;
}

const HELP = 'commands: /compact (summarize older context now), /context (how full the window is), /help, /exit; Ctrl-C cancels the running turn, Ctrl-D exits';

/** Inline approvals: the question (as `run` asks it: the exact call, controls shown) is printed, the next line answers it. */
function lineAnswerer(out: NodeJS.WritableStream, pending: { resolve?: (line: string | null) => void }): Answerer {
  return (req) =>
    new Promise<ApprovalAnswer>((resolve) => {
      const done = (line: string | null) => {
        pending.resolve = undefined;
        const a = line?.trim().toLowerCase();
        if (a === undefined) resolve({ outcome: req.signal.aborted ? 'cancelled' : 'unavailable', by: 'chat' });
        else if (a === 'y' || a === 'yes') resolve({ outcome: 'allowed-once', by: 'chat' });
        else if (a === 'a' || a === 'always') resolve({ outcome: 'allowed-always', by: 'chat' });
        else resolve({ outcome: 'rejected', by: 'chat' });
      };
      req.signal.addEventListener('abort', () => done(null), { once: true });
      pending.resolve = done;
      out.write(approvalQuestion(req));
    });
}

type Pending = { resolve?: (line: string | null) => void };

export async function chatCommand(product: Product, flags: RunFlags, io: ChatIO = { input: process.stdin, out: process.stdout, err: process.stderr }): Promise<number> {
  const { out, err } = io;
  const pending: Pending = {};
  const opened = await openChat(product, flags, io, pending);
  const { session, logPath } = opened;
  // A turn the log could not save is said once, as it ends; the chat goes on, and exits 1 at the end.
  let unsaved = false;
  const reportUnsaved = (o: Awaited<ReturnType<typeof session.idle>>) => {
    const line = unsavedTurnLine(o, logPath);
    if (line && !unsaved) err.write(`${line}\n`);
    if (line) unsaved = true;
  };
  await readLines(session, io, pending, { logPath, reportUnsaved, markUnsaved: () => (unsaved = true) });
  const closeLine = await closeSaying(session, logPath);
  if (io.input.isTTY) out.write('\n');
  if (closeLine && !unsaved) err.write(`${closeLine}\n`);
  err.write(`log: ${logPath}\n`);
  return unsaved || closeLine ? 1 : 0;
}

/** Opens the session with the line answerer, its entries shown as they come, then starts it and says what it runs with. */
async function openChat(product: Product, flags: RunFlags, io: ChatIO, pending: Pending): Promise<OpenedSession> {
  const { out, err } = io;
  for (const w of product.warnings) err.write(`bridle: warning: ${w}\n`);
  const opened = await openSession({
    product,
    cwd: flags.cwd,
    session: flags.session,
    // Whatever the policy: a continued session runs under its logged one (ADR 0027); only `ask` calls it.
    answerer: lineAnswerer(out, pending),
    askOnBudget: true,
  });
  const { session, logPath, scriptedLabel } = opened;
  const approval = session.host.get(APPROVAL).policy;
  const renderer = createRenderer(out, opened.tools, { color: Boolean(out.isTTY), scriptedLabel: scriptedLabel });
  // Subscribed before the session starts: a turn a continued log's queued input starts as it opens (ADR 0021) is shown whole.
  const progress = progressPrinter(err);
  session.subscribe((ev) => {
    const e = entryToShow(ev);
    if (e) renderer.onEntry(e);
    if (ev.type === 'entry.appended') for (const l of [...mcpNotes(ev.entry), ...skillNotes(ev.entry)]) err.write(`${l}\n`);
    else if (ev.type === 'chunk.streamed') renderer.onChunk(ev.chunk, ev.step);
    else if (ev.type === 'tool.progress') progress(ev);
  });
  opened.start();
  if (scriptedLabel) err.write(`model: ${visible(scriptedLabel)}\n`);
  err.write(`workspace: ${opened.workspace}\n${opened.sandboxLine}\napproval: ${approval}\nlog: ${logPath}\n${HELP}\n`);
  return opened;
}

interface Unsaved {
  logPath: string;
  /** Says a turn the log could not save, once. */
  reportUnsaved: (o: TurnOutput | undefined) => void;
  /** An input was not saved, or the session crashed on a save. */
  markUnsaved: () => void;
}

/**
 * The REPL: each line a prompt, an approval's answer or a command; Ctrl-C cancels the running turn. Contract: resolves at end of
 * input (or `/exit`) once what was asked for has finished and the session is idle.
 */
async function readLines(session: BridleSession, io: ChatIO, pending: Pending, u: Unsaved): Promise<void> {
  const { out, err } = io;
  const tty = Boolean(io.input.isTTY);
  const rl = createInterface({ input: io.input, output: out, terminal: tty, prompt: '> ' });
  const inflight = new Set<Promise<unknown>>();
  const prompt = () => {
    if (tty && inflight.size === 0 && !pending.resolve) rl.prompt();
  };
  const track = (work: Promise<unknown>) => {
    const p = work.finally(() => {
      inflight.delete(p);
      prompt();
    });
    inflight.add(p);
  };
  const interrupt = interrupter(session, io, prompt);
  rl.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);

  rl.on('line', (raw) => {
    if (pending.resolve) return pending.resolve(raw);
    const line = raw.trim();
    if (!line) return prompt();
    if (line === '/help') return void (out.write(`${HELP}\n`), prompt());
    if (line === '/context') return void (out.write(`${contextLine(session)}\n`), prompt());
    if (line === '/exit' || line === '/quit') return void rl.close();
    if (line === '/compact') {
      out.write('compacting…\n');
      return track(session.compact('user').then((r) => out.write(r ? `compaction ${r.outcome}: ${r.tokensBefore} → ${r.tokensAfter} tokens\n` : 'compaction could not start\n')));
    }
    if (line.startsWith('/')) return void (out.write(`unknown command ${line}; ${HELP}\n`), prompt());
    const queued = session.actor.getSnapshot().value !== 'idle';
    // Received once it is saved (ADR 0021): only then does a line queued behind a running turn say so.
    const sent = session.send(line).then(
      () => {
        if (queued) out.write('(queued: it runs after the current turn)\n');
      },
      (e: unknown) => {
        // A crashed session takes no more input (SESSION_CRASHED), and one that could not be saved did not receive it: say so once and leave.
        if (e instanceof SessionCrashedError) err.write(`${crashedLine(e, u.logPath)}\n`);
        else err.write(`bridle: the input was not received: ${(e as Error).message}\n`);
        if (!(e instanceof SessionCrashedError) || e.saveFailure) u.markUnsaved();
        rl.close();
      },
    );
    track(sent.then(() => session.idle()).then(u.reportUnsaved));
  });
  prompt();

  await new Promise<void>((resolve) => rl.once('close', resolve));
  pending.resolve?.(null);
  // End of input: let what was asked for finish, then leave.
  while (inflight.size > 0) await Promise.allSettled([...inflight]);
  u.reportUnsaved(await session.idle());
  process.off('SIGINT', interrupt);
}

function contextLine(session: BridleSession): string {
  const m = session.meter.measure();
  const of = session.meter.knowsWindow ? ` of a ${m.window}-token window` : ' (window unknown)';
  return `context: ${m.tokens} tokens${m.source === 'estimate' ? ' (estimate)' : ''}${of}`;
}

/** Ctrl-C: at the prompt, a hint; in a turn, cancels it; a second time while cancelling, the turn closed in the log and exit 130. */
function interrupter(session: BridleSession, io: ChatIO, prompt: () => void): () => void {
  let cancelling = false;
  return () => {
    const running = session.actor.getSnapshot().value !== 'idle';
    if (!running) {
      io.out.write('\n(Ctrl-D to exit)\n');
      prompt();
    } else if (!cancelling) {
      cancelling = true;
      io.err.write('\ncancelling… (Ctrl-C again to exit at once)\n');
      void session.cancel('user').then(() => (cancelling = false));
    } else {
      closeOpenTurnNow(session.recorder, { reason: 'aborted', cause: 'user' });
      process.exit(130);
    }
  };
}
