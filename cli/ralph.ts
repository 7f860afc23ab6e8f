/**
 * `bridle ralph "<objective>" --rounds N --verify "<command>" [--verifier]`:
 * the Ralph loop (`runtime/ralph/loop.ts`) over a session of its own, whose
 * log holds every round and check. Exit 0 when a claim of complete was
 * verified; 1 when the rounds ran out or a round was blocked (its blocker
 * printed); 130 on Ctrl-C (a second one exits at once; `bridle resume`
 * goes on either way). It ends by printing `log: <path>`, as `run` does.
 */
import { SESSION, SUBPROCESS } from '../ports/index.js';
import type { Entry, EntryOf } from '../log/entries.js';
import type { WriterLock } from '../ports/store.js';
import { runRalph, type RalphOutcome } from '../runtime/ralph/loop.js';
import { ralphState } from '../runtime/ralph/state.js';
import { UsageError } from './errors.js';
import { openSession } from './open-session.js';
import type { RunFlags } from './run.js';
import { composeProduct, type Product } from './settings.js';
import { visible } from './visible.js';
import { createRenderer } from './render.js';
import type { ToolLookup } from '../tools/present.js';
import type { ToolDefinition } from '../ports/tools.js';
import { handoffTool, verdictTool } from '../runtime/ralph/tools.js';

export interface RalphFlags extends Omit<RunFlags, 'session' | 'json'> {
  rounds?: string;
  verify?: string;
  verifier?: boolean;
}

const EXIT: Record<RalphOutcome, number> = { verified: 0, exhausted: 1, blocked: 1, cancelled: 130 };

export function parseRounds(v: string | undefined): number {
  if (v === undefined) return 5;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new UsageError(`--rounds must be a whole number from 1 to 100 (got ${JSON.stringify(v)})`);
  return n;
}

export async function ralphCommand(objective: string, flags: RalphFlags): Promise<number> {
  if (!objective.trim()) throw new UsageError('ralph needs an objective, e.g. bridle ralph "make every test pass reliably" --verify "npm test"');
  const rounds = parseRounds(flags.rounds);
  if (flags.verify === undefined && !flags.verifier) throw new UsageError('ralph checks a claim of complete before it accepts it: pass --verify "<command>" (exit 0 is verified), --verifier (an agent that reads the workspace), or both');
  if (flags.verify !== undefined && !flags.verify.trim()) throw new UsageError('--verify needs a command');
  const product = await composeProduct(flags, { workspace: flags.cwd ?? process.cwd() });
  return driveRalph(product, flags, { start: { objective, rounds, verify: flags.verify ?? null, verifier: Boolean(flags.verifier) } });
}

/** Continues a Ralph run from its log (`bridle resume`): at the round, or the check, it was in. */
export async function continueRalph(path: string, entries: Entry[], flags: RalphFlags, lock: WriterLock, err: { write(s: string): unknown }): Promise<number> {
  const st = ralphState(entries)!;
  const start = entries[0] as EntryOf<'session/start'>;
  if (st.ended) {
    err.write(`ralph: this run ended ${st.ended.outcome} after round ${st.ended.round}; there is nothing to continue\nlog: ${path}\n`);
    return EXIT[st.ended.outcome];
  }
  const product = await composeProduct(flags, { loggedModel: start.model });
  err.write(`ralph: continuing after round ${st.done} of ${st.plan.rounds}${st.open ? ` (the ${st.open.kind === 'round' ? `round ${st.open.round}` : `check of round ${st.open.round}`} that was running runs again)` : ''}\n`);
  return driveRalph(product, flags, { existing: { path, entries, lock } });
}

async function driveRalph(
  product: Product,
  flags: RalphFlags,
  o: { start?: { objective: string; rounds: number; verify: string | null; verifier: boolean }; existing?: { path: string; entries: Entry[]; lock: WriterLock } },
): Promise<number> {
  const err = process.stderr;
  for (const w of product.warnings) err.write(`bridle: warning: ${w}\n`);
  const opened = await openSession({
    product,
    ...(flags.cwd !== undefined ? { cwd: flags.cwd } : {}),
    ...(o.existing ? { session: o.existing.path, existing: o.existing.entries, lock: o.existing.lock } : {}),
  });
  const { session } = opened;
  opened.start();
  const control = session.host.get(SESSION);
  if (opened.scriptedLabel) err.write(`model: ${visible(opened.scriptedLabel)}\n`);
  err.write(`workspace: ${opened.workspace}\n${opened.sandboxLine}\napproval: never for every round's worker and the verifier agent (nobody is asked: what the sandbox confines runs, the rest is refused by name)\n`);
  if (o.start) {
    control.record({ kind: 'ralph/start', ...o.start });
    err.write(`ralph: ${o.start.rounds} rounds at most; a claim of complete is checked by ${[o.start.verify !== null ? `\`${o.start.verify}\` (under the sandbox)` : '', o.start.verifier ? 'a verifier agent' : ''].filter(Boolean).join(' and ')}\n`);
  }
  const ctl = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      err.write('\ncancelling the round… (Ctrl-C again to exit at once; `bridle resume` goes on)\n');
      ctl.abort();
    } else process.exit(130);
  };
  process.on('SIGINT', onSigint);
  let outcome: RalphOutcome;
  try {
    // Each child's transcript, as `run` shows one: its text as it streams, its calls and their results.
    const own = new Map<string, ToolDefinition>([['handoff', handoffTool({})], ['verdict', verdictTool({})]]);
    const tools: ToolLookup = { get: (name) => own.get(name) ?? opened.tools.get(name) };
    const watch = () => {
      const r = createRenderer(process.stdout, tools, { color: Boolean(process.stdout.isTTY), ...(opened.scriptedLabel ? { scriptedLabel: opened.scriptedLabel } : {}) });
      return { onEntry: (e: Entry) => r.onEntry(e), onChunk: (c: Parameters<typeof r.onChunk>[0], s: string) => r.onChunk(c, s) };
    };
    outcome = await runRalph({ session: control, subprocess: session.host.get(SUBPROCESS), signal: ctl.signal, say: (line) => void err.write(`${visible(line, 'text')}\n`), watch });
  } finally {
    process.off('SIGINT', onSigint);
    await session.close();
  }
  const end = ralphState(session.recorder.entries)!;
  const last = session.recorder.entries.findLast((e): e is EntryOf<'ralph/end'> => e.kind === 'ralph/end');
  if (outcome === 'verified') process.stdout.write(`ralph: verified complete after round ${last?.round ?? end.done}\n`);
  else if (outcome === 'blocked') process.stdout.write(`ralph: blocked in round ${last?.round ?? end.done}: ${visible(last?.blockerText ?? '', 'text')}\n`);
  else if (outcome === 'exhausted') process.stdout.write(`ralph: ${end.plan.rounds} rounds ran out without a verified claim of complete\n`);
  else process.stdout.write('ralph: cancelled; `bridle resume` goes on with the round it stopped in\n');
  err.write(`log: ${opened.logPath}\n`);
  return EXIT[outcome];
}
