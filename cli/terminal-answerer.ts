/**
 * The terminal answerer: shows the call as its tool's presenter renders it,
 * then the exact arguments, and reads y / n / a (always: adds a session rule
 * for exactly this call) from the terminal. One question at a time; a closed
 * stdin answers `unavailable`, which denies. `run` mounts it only when stdin
 * is a terminal. A tool's question with a form asks yes or no, then each
 * field (`terminal-form.ts`, ADR 0065).
 */
import { createInterface } from 'node:readline';
import type { Answerer, AnswerRequest } from '../ports/approval.js';
import { changeOf, type Change } from '../tools/diff.js';
import { visible } from './visible.js';
import { fieldPrompt, formQuestion } from './terminal-form.js';

const parsed = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
};

function argumentLines(raw: string): string[] {
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    return [`  arguments: ${visible(raw)}`];
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return [`  arguments: ${visible(raw)}`];
  const out: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const lines = text.split('\n');
    if (lines.length === 1) out.push(`  ${visible(key)}: ${visible(text)}`);
    else out.push(`  ${visible(key)}:`, ...lines.map((l) => `    │ ${visible(l)}`));
  }
  return out;
}

/** An edit or a write as the viewer's card shows it (tools/diff.ts): the path, then every line removed, added or kept. */
function changeLines(change: Change): string[] {
  const lines = change.lines.map((l) => `    ${l.op} ${visible(l.text)}`);
  return [`  ${change.tool === 'edit_file' ? 'edit' : 'write'} ${visible(change.path)}:`, ...(lines.length ? lines : ['    (no lines)'])];
}

/**
 * The question a person answers: the presenter's line (short, and it may cut
 * a long command), then every argument whole — a multi-line value one line
 * per line — so nothing that runs is left unseen, and every control
 * character shown by `visible`, so nothing can be overwritten on screen.
 * An `edit_file` or `write_file` shows its change as a diff instead of its
 * raw arguments: every line of `old_text`, `new_text` and `content` is in it.
 * Contract: pure; the text holds no terminal control but `\n`.
 */
export function approvalQuestion(req: Pick<AnswerRequest, 'name' | 'presented' | 'arguments' | 'reason'>): string {
  const change = changeOf(req.name, parsed(req.arguments));
  return [
    '',
    `? ${visible(req.presented)}`,
    ...(change ? changeLines(change) : argumentLines(req.arguments)),
    `  ${visible(req.reason)}. [y]es / [n]o / [a]lways (this exact call, for this session): `,
  ].join('\n');
}

export function terminalAnswerer(out: NodeJS.WritableStream, input: NodeJS.ReadableStream = process.stdin): Answerer {
  let queue: Promise<unknown> = Promise.resolve();
  return (req) => {
    const ask = async () => {
      if (req.signal.aborted) return { outcome: 'cancelled' as const, by: 'terminal' };
      const rl = createInterface({ input, output: out, terminal: false });
      // Lines kept until asked for: a form's answers may come in one chunk.
      const lines: string[] = [];
      let waiting: ((l: string | null) => void) | undefined;
      let closed = false;
      rl.on('line', (l) => (waiting ? (waiting(l), (waiting = undefined)) : lines.push(l)));
      rl.once('close', () => ((closed = true), waiting?.(null)));
      req.signal.addEventListener('abort', () => waiting?.(null), { once: true });
      const next = (prompt: string) =>
        new Promise<string | null>((resolve) => {
          out.write(prompt);
          if (lines.length) resolve(lines.shift()!);
          else if (closed || req.signal.aborted) resolve(null);
          else waiting = resolve;
        });
      const gone = () => ({ outcome: req.signal.aborted ? ('cancelled' as const) : ('unavailable' as const), by: 'terminal' });
      try {
        const answer = await next(req.form ? formQuestion({ presented: req.presented, form: req.form }) : approvalQuestion(req));
        if (answer === null) return gone();
        const a = answer.trim().toLowerCase();
        const yes = a === 'y' || a === 'yes';
        if (req.form) {
          if (!yes) return { outcome: 'rejected' as const, by: 'terminal' };
          const values: Record<string, string> = {};
          for (const f of req.form.fields) {
            const v = await next(fieldPrompt(f));
            if (v === null) return gone();
            if (v.trim() !== '') values[f.name] = v.trim();
          }
          return { outcome: 'allowed-once' as const, by: 'terminal', values };
        }
        if (yes) return { outcome: 'allowed-once' as const, by: 'terminal' };
        if (a === 'a' || a === 'always') return { outcome: 'allowed-always' as const, by: 'terminal' };
        return { outcome: 'rejected' as const, by: 'terminal' };
      } finally {
        rl.close();
      }
    };
    const next = queue.then(ask, ask);
    queue = next.catch(() => undefined);
    return next;
  };
}
