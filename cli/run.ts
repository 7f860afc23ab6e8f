/** `bridle run [prompt]`: one turn in a new or continued session, streamed to the terminal. */
import type { Answerer } from '../ports/approval.js';
import type { Entry } from '../log/entries.js';
import type { Origin } from '../log/entry-values.js';
import { SessionCrashedError } from '../runtime/session-fault.js';
import { APPROVAL } from '../ports/index.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import { UsageError } from './errors.js';
import { openSession, type OpenOptions } from './open-session.js';
import type { Product, SettingFlags } from './settings.js';
import { createRenderer, mcpNotes, skillNotes, type Renderer } from './render.js';
import { terminalAnswerer } from './terminal-answerer.js';
import { jsonLine, visible } from './visible.js';
import { closeSaying, crashedLine, entryToShow, unsavedTurnLine } from './save-failure.js';
import { progressPrinter } from './progress-line.js';
import { TurnEndCode } from '../log/codes.js';

export interface RunFlags extends SettingFlags {
  cwd?: string;
  session?: string;
  json?: boolean;
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

/** The approval policy the product's `approval` row runs under (its config is checked, defaults filled). */
export function policyOf(product: Product): string {
  const row = product.rows.find((r) => r.id === 'approval');
  return (row?.config as { policy?: string } | undefined)?.policy ?? 'ask';
}

/**
 * Runs one prompt — or none, when a continued session only has the input its log left queued to run (it is
 * handed that as it opens); wires Ctrl-C: the first cancels the turn (exit 130 once the log is flushed), a second exits at once.
 */
export async function runPrompt(prompt: string | undefined, product: Product, flags: RunFlags, extra: Partial<OpenOptions> = {}, origin?: Origin): Promise<number> {
  const err = process.stderr;
  for (const w of product.warnings) err.write(`bridle: warning: ${w}\n`);
  // On a terminal the answerer is there whatever the policy: a continued session runs under its logged one (ADR 0027), known once it is open; only `ask` calls it.
  const answerer: Answerer | undefined = process.stdin.isTTY ? terminalAnswerer(err) : undefined;
  const opened = await openSession({
    product,
    ...(flags.cwd !== undefined ? { cwd: flags.cwd } : {}),
    ...(flags.session !== undefined ? { session: flags.session } : {}),
    ...(answerer ? { answerer } : {}),
    ...extra,
  });
  const { session, logPath, tools, scriptedLabel } = opened;
  const approval = session.host.get(APPROVAL).policy;
  const human = flags.json ? err : process.stdout;
  const renderer: Renderer = createRenderer(human, tools, { color: Boolean((human as NodeJS.WriteStream).isTTY), scriptedLabel });
  // Subscribed before the session starts: its `session/start`, and a turn a continued log's queued input starts (ADR 0021), are shown whole.
  const show = flags.json ? (e: Entry) => void process.stdout.write(`${jsonLine(e)}\n`) : (e: Entry) => renderer.onEntry(e);
  const progress = progressPrinter(err);
  session.subscribe((ev) => {
    const e = entryToShow(ev);
    if (e) show(e);
    if (ev.type === 'entry.appended') for (const l of [...mcpNotes(ev.entry), ...skillNotes(ev.entry)]) err.write(`${l}\n`);
    else if (ev.type === 'chunk.streamed' && !flags.json) renderer.onChunk(ev.chunk, ev.step);
    else if (ev.type === 'tool.progress') progress(ev);
  });
  opened.start();
  if (scriptedLabel) err.write(`model: ${visible(scriptedLabel)}\n`);
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
    const out = await (prompt !== undefined ? session.run(prompt, origin) : session.idle()).catch((e: unknown) => {
      if (!(e instanceof SessionCrashedError)) throw e;
      err.write(`${crashedLine(e, logPath)}\n`);
      return undefined;
    });
    const unsaved = unsavedTurnLine(out, logPath);
    // The last flush (the checkpoint) can fail too; said once, and only when the turn itself was saved.
    const closeLine = await closeSaying(session, logPath);
    err.write(`log: ${logPath}\n`);
    if (unsaved) err.write(`${unsaved}\n`);
    // The provider's message is the provider's (or a proxy's) text: shown, never acted on.
    // A spent budget names its figures (used/limit), as the log's turn/end does.
    else if (out?.reason === 'error' && out.code === TurnEndCode.BUDGET_EXHAUSTED) err.write(`bridle: the turn failed: BUDGET_EXHAUSTED — the budget is spent: ${visible(out.cause ?? '')}\n`);
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
