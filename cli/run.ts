/** `bridle run [prompt]`: one turn in a new or continued session, streamed to the terminal. */
import type { Answerer } from '../safety/approval.js';
import type { Origin } from '../log/entries.js';
import { SessionCrashedError } from '../runtime/session.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import { UsageError } from './errors.js';
import { openSession, type OpenOptions } from './open-session.js';
import { createRenderer, type Renderer } from './render.js';
import { parseSafetyFlags, type SafetyFlags } from './safety-flags.js';
import { terminalAnswerer } from './terminal-answerer.js';
import { jsonLine, visible } from './visible.js';
import { closeFailureLine, crashedLine, showEntries, unsavedTurnLine } from './save-failure.js';

export interface RunFlags extends SafetyFlags {
  model?: string;
  baseUrl?: string;
  cwd?: string;
  session?: string;
  approval?: string;
  json?: boolean;
  maxSteps?: string;
  maxDepth?: string;
  contextWindow?: string;
  streamIdleMs?: string;
  streamTotalMs?: string;
  /** From the config file (`contextWindows`), not a flag: windows per model id. */
  contextWindows?: Readonly<Record<string, number>>;
}

export const exitCodeFor = (t: TurnOutput | undefined): number => (!t ? 1 : t.reason === 'completed' ? 0 : t.reason === 'aborted' ? 130 : 1);

export async function readPrompt(arg: string | undefined, stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (arg !== undefined) return arg;
  if (stdin.isTTY) throw new UsageError('no prompt: pass it as an argument, e.g. bridle run "fix the tests", or pipe it in on stdin');
  let text = '';
  for await (const chunk of stdin) text += chunk;
  if (!text.trim()) throw new UsageError('no prompt: stdin was empty; pass the prompt as an argument or pipe it in');
  return text.trimEnd();
}

export function parseApproval(v: string | undefined): 'never' | 'ask' | 'auto' | undefined {
  if (v === undefined) return undefined;
  if (v === 'never' || v === 'ask' || v === 'auto') return v;
  throw new UsageError(`--approval must be never, ask or auto (got ${JSON.stringify(v)})`);
}

export function parseContextWindow(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1024) throw new UsageError(`--context-window must be a whole number of tokens, at least 1024 (got ${JSON.stringify(v)})`);
  return n;
}

/** What `run` and `chat` share of their flags, parsed and checked, for `openSession`. */
export function sessionFlags(flags: RunFlags): Partial<OpenOptions> {
  const safety = parseSafetyFlags(flags);
  return {
    model: flags.model,
    baseUrl: flags.baseUrl,
    cwd: flags.cwd,
    session: flags.session,
    rules: safety.rules,
    sandbox: safety.sandbox,
    sandboxMode: safety.sandboxMode,
    allowNetwork: safety.allowNetwork,
    allowGitWrites: safety.allowGitWrites,
    sandboxLimits: safety.sandboxLimits,
    maxSteps: parseMaxSteps(flags.maxSteps),
    maxDepth: parseMaxDepth(flags.maxDepth),
    contextWindow: parseContextWindow(flags.contextWindow),
    contextWindows: flags.contextWindows,
    streamIdleMs: parseStreamMs('--stream-idle-ms', flags.streamIdleMs),
    streamTotalMs: parseStreamMs('--stream-total-ms', flags.streamTotalMs),
  };
}

/** `--stream-idle-ms`, `--stream-total-ms`: a whole number of milliseconds, at least 1. */
export function parseStreamMs(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number of milliseconds, at least 1 (got ${JSON.stringify(v)})`);
  return n;
}

export function parseMaxDepth(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 8) throw new UsageError(`--max-depth must be a whole number from 0 to 8 (got ${JSON.stringify(v)})`);
  return n;
}

export function parseMaxSteps(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--max-steps must be a positive whole number (got ${JSON.stringify(v)})`);
  return n;
}

/** Runs one prompt; wires Ctrl-C: the first cancels the turn (exit 130 once the log is flushed), a second exits at once. */
export async function runPrompt(prompt: string, flags: RunFlags, extra: Partial<OpenOptions> = {}, origin?: Origin): Promise<number> {
  const err = process.stderr;
  let renderer: Renderer | undefined;
  const approval = parseApproval(flags.approval) ?? 'ask';
  const answerer: Answerer | undefined = approval === 'ask' && process.stdin.isTTY ? terminalAnswerer(err) : undefined;
  const opened = openSession({
    ...sessionFlags(flags),
    approval,
    answerer,
    onChunk: flags.json ? undefined : (c, s) => renderer?.onChunk(c, s),
    ...extra,
  });
  const { session, logPath, tools, model } = opened;
  const human = flags.json ? err : process.stdout;
  renderer = createRenderer(human, tools, { color: Boolean((human as NodeJS.WriteStream).isTTY), scriptedLabel: model.scriptedLabel });
  if (flags.json) {
    // What this run added before we could subscribe (a new log's session/start) goes out first.
    const known = opened.priorEntries;
    for (const e of session.recorder.entries.slice(known)) process.stdout.write(`${jsonLine(e)}\n`);
    showEntries(session.recorder, (e) => process.stdout.write(`${jsonLine(e)}\n`));
  } else showEntries(session.recorder, (e) => renderer?.onEntry(e));
  if (model.scriptedLabel) err.write(`model: ${visible(model.scriptedLabel)}\n`);
  err.write(`workspace: ${opened.workspace}\n${opened.sandboxLine}\napproval: ${approval}${approval === 'ask' && !answerer ? ' (no terminal: calls that ask are denied)' : ''}\n`);

  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      err.write('\ncancelling… (Ctrl-C again to exit at once)\n');
      void session.cancel('user');
    } else {
      // Exit now, but leave a log that verifies: close the open turn the way resume's repair would.
      closeOpenTurnNow(session.recorder, { reason: 'aborted', cause: 'user' });
      process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);
  try {
    const out = await session.run(prompt, origin).catch((e: unknown) => {
      if (!(e instanceof SessionCrashedError)) throw e;
      err.write(`${crashedLine(e, logPath)}\n`);
      return undefined;
    });
    const unsaved = unsavedTurnLine(out, logPath);
    // The last flush (the checkpoint) can fail too; said once, and only when the turn itself was saved.
    const closeLine = await session.close().then(
      () => undefined,
      (e: unknown) => {
        const line = closeFailureLine(e, logPath);
        if (line === undefined) throw e;
        return line;
      },
    );
    err.write(`log: ${logPath}\n`);
    if (unsaved) err.write(`${unsaved}\n`);
    // The provider's message is the provider's (or a proxy's) text: shown, never acted on.
    else if (out?.reason === 'error') err.write(`bridle: the turn failed: ${visible(`${out.code ?? 'error'}${lastModelError(session.recorder.entries) ?? ''}`)}\n`);
    if (closeLine && !unsaved && out) err.write(`${closeLine}\n`);
    return closeLine && out && !unsaved ? Math.max(1, exitCodeFor(out)) : exitCodeFor(out);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function lastModelError(entries: readonly { kind: string }[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as { kind: string; finish?: { kind: string; message?: string } };
    if (e.kind === 'assistant/message' && e.finish?.kind === 'error') return ` — ${e.finish.message}`;
  }
  return undefined;
}
