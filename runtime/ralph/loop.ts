/**
 * The Ralph loop: a fixed script over the same primitives a workflow's
 * `agent()` uses — a fresh child session per round of the run's own product
 * (`session.child`), told only the immutable objective, the round and its
 * cap, and the previous round's bounded handoff; the workspace persists,
 * no conversation does. When a round claims `complete`, independent checks
 * test the claim against the workspace before it is accepted: the
 * `--verify` command under the sandbox (exit 0 is verified), and/or a
 * verifier agent with read-only tools that must cite what it read. A
 * rejected claim is logged, and the next round gets the verifier's output
 * as evidence. Every round and check is an entry of the run's own log; the
 * next step is always decided from that log alone (`state.ts`), so a run
 * killed anywhere continues at the round it was in.
 */
import { finalText } from '../../log/completed-turns.js';
import { ralphRoundSessionId, ralphVerifierSessionId } from '../../log/ids.js';
import { normalizePath } from '../../plugins/hooks/canonical.js';
import type { Draft, EntryOf } from '../../log/entries.js';
import { RalphCode, type Handoff } from '../../log/entries-ralph.js';
import type { ChildSpec, SessionControl } from '../../ports/session.js';
import type { ChildOutcome, ChildSession } from '../../ports/subagents.js';
import type { Subprocess } from '../../ports/subprocess.js';
import { fit, nextStep, ralphState, type Check, type RalphState } from './state.js';
import { roundPrompt, verifierPrompt } from './prompts.js';
import { handoffTool, verdictTool, type Captured, type Verdict } from './tools.js';
import { SubagentCode } from '../../log/codes.js';

/** The verifier agent's tools: it reads, and answers through `verdict`. */
export const VERIFIER_TOOLS = ['read_file', 'list_dir', 'glob', 'grep'];
/** How long the `--verify` command may run. */
export const VERIFY_TIMEOUT_MS = 30 * 60_000;
/** How much of a check's output is logged and handed on (its end: where test runners say what failed). */
export const VERDICT_OUTPUT_CHARS = 1800;

export interface RalphDeps {
  /** The run's own session: its log holds every round and check; its product builds the children. */
  session: SessionControl;
  /** Runs the `--verify` command, under the session's sandbox. */
  subprocess: Subprocess;
  /** Ctrl-C: the running round or check is stopped, the run ends `cancelled`. */
  signal: AbortSignal;
  /** Progress, one line at a time, for people. */
  say(line: string): void;
  /** Shows a child as it works (a transcript), when the host wants one. */
  watch?: (child: string) => Pick<ChildSpec, 'onEntry' | 'onChunk'>;
}

export type RalphOutcome = EntryOf<'ralph/end'>['outcome'];

const head = (text: string, n: number) => {
  const points = [...text.trim()];
  return points.length <= n ? points.join('') : `${points.slice(0, n).join('')}…`;
};
const tail = (text: string, n: number) => {
  const points = [...text.trim()];
  return points.length <= n ? points.join('') : `…${points.slice(-n).join('')}`;
};

async function runChild(child: ChildSession, prompt: string, signal: AbortSignal): Promise<{ out: ChildOutcome; text: string }> {
  const onAbort = () => void child.cancel('user');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const from = child.entries().length;
    const out = await child.run(prompt).catch((err: unknown): ChildOutcome => ({ reason: 'error', code: SubagentCode.SUBAGENT_CRASHED, cause: err instanceof Error ? err.message : String(err) }));
    return { out, text: finalText(child.entries(), from) };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await child.close();
  }
}

/** The path a verifier call targeted, normalized (`./src/` → `src`); a search or listing without one targets the root. */
const targetOf = (name: string, args: { path?: unknown }): string | undefined =>
  typeof args.path === 'string' ? normalizePath(args.path) : name === 'read_file' ? undefined : '.';
const within = (p: string, dir: string) => dir === '.' || p === dir || p.startsWith(`${dir}/`);

/**
 * A path the verifier cites counts only if it read that path (ADR 0052): an
 * ok `read_file` of it; an ok `grep` that targeted it (the file itself), or
 * targeted a directory holding it and shows a matching line of it; an ok
 * `list_dir` or `glob` of that very directory. A name in a listing, or a
 * string anywhere in some result, is not a reading.
 * Contract: pure.
 */
export function cited(entries: ReturnType<ChildSession['entries']>, path: string): boolean {
  const want = normalizePath(path);
  const ok = new Map(entries.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.status === 'ok').map((e) => [e.callId, e.content]));
  for (const e of entries) {
    if (e.kind !== 'tool/call' || !ok.has(e.callId)) continue;
    let args: { path?: unknown };
    try {
      args = JSON.parse(e.arguments) as { path?: unknown };
    } catch {
      continue;
    }
    const target = targetOf(e.name, args ?? {});
    if (target === undefined) continue;
    if (target === want && ['read_file', 'grep', 'list_dir', 'glob'].includes(e.name)) return true;
    if (e.name === 'grep' && within(want, target) && ok.get(e.callId)!.split('\n').some((l) => l.startsWith(`${want}:`))) return true;
  }
  return false;
}

export async function runRalph(d: RalphDeps): Promise<RalphOutcome> {
  const s = d.session;
  const record = (draft: Draft) => s.record(draft);
  const state = () => ralphState(s.entries())!;
  for (;;) {
    const st = state();
    const step = nextStep(st);
    if (step.kind === 'stop') return st.ended!.outcome;
    if (d.signal.aborted) return cancelled(st);
    switch (step.kind) {
      case 'close-round':
        d.say(`ralph: round ${step.round} was interrupted; it runs again with a fresh child`);
        record({ kind: 'ralph/handoff', round: step.round, child: step.child, reason: 'interrupted', source: 'interrupted', handoff: st.handoff ?? { status: 'continue', summary: '(interrupted before it left a handoff)', evidence: '' } });
        break;
      case 'close-check':
        d.say(`ralph: the check of round ${step.round} (${step.by}) was interrupted; it runs again`);
        record({ kind: 'ralph/verdict', round: step.round, by: step.by, verified: false, code: RalphCode.INTERRUPTED, output: 'the check was interrupted before it ended; it runs again' });
        break;
      case 'end':
        record({ kind: 'ralph/end', outcome: step.outcome, round: step.round, ...(step.blockerText !== undefined ? { blockerText: step.blockerText } : {}) });
        return step.outcome;
      case 'round':
        await round(d, st, step.round, step.attempt, step.handoff);
        break;
      case 'check':
        await check(d, st, step.round, step.by, step.claim);
        break;
    }
  }

  function cancelled(st: RalphState): RalphOutcome {
    record({ kind: 'ralph/end', outcome: 'cancelled', round: st.done });
    return 'cancelled';
  }
}

async function round(d: RalphDeps, st: RalphState, n: number, attempt: number, input: Handoff | undefined): Promise<void> {
  const s = d.session;
  const id = ralphRoundSessionId(s.id, n, attempt);
  const captured: Captured<Handoff> = {};
  const child = s.child({ id, depth: s.depth + 1, approval: 'never', scoped: [handoffTool(captured)], ...d.watch?.(id) });
  s.record({ kind: 'ralph/round', round: n, attempt, child: id });
  // The round that names the child is durable before any of the child's turn is (ADR 0103): a store that commits at a
  // flush would otherwise keep a killed run's child log and lose the line that names it.
  await s.flush?.();
  d.say(`ralph: round ${n}/${st.plan.rounds}: a fresh child, log: ${child.location}`);
  const { out, text } = await runChild(child, roundPrompt(st.plan.objective, n, st.plan.rounds, input), d.signal);
  if (d.signal.aborted) {
    s.record({ kind: 'ralph/handoff', round: n, child: id, reason: out.reason, source: 'interrupted', handoff: input ?? { status: 'continue', summary: '(cancelled before it left a handoff)', evidence: '' } });
    return;
  }
  // A round that left no handoff counts as `continue`, its last words the summary (bounded: the harness wrote this one).
  const handoff = captured.value ?? fit({ status: 'continue', summary: text || `(the round ended ${out.reason}${out.code ? ` ${out.code}` : ''} with no handoff and no final text)`, evidence: '' }, 'summary');
  s.record({ kind: 'ralph/handoff', round: n, child: id, reason: out.reason, source: captured.value ? 'tool' : 'last-text', handoff });
  d.say(`ralph: round ${n} says ${handoff.status}${captured.value ? '' : ' (it left no handoff)'}: ${head(handoff.summary, 240)}`);
}

async function check(d: RalphDeps, st: RalphState, n: number, by: Check, claim: Handoff): Promise<void> {
  const s = d.session;
  if (by === 'command') {
    const command = st.plan.verify!;
    s.record({ kind: 'ralph/verify', round: n, by, command });
    d.say(`ralph: checking round ${n}'s claim of complete: ${command}`);
    let verdict: Omit<Extract<Draft, { kind: 'ralph/verdict' }>, 'kind' | 'round' | 'by'>;
    try {
      const spec = d.subprocess.resolve({ argv: ['bash', '-c', command], timeoutMs: VERIFY_TIMEOUT_MS });
      const r = await d.subprocess.run(spec, d.signal);
      const output = tail(`${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`, VERDICT_OUTPUT_CHARS);
      if (d.signal.aborted) verdict = { verified: false, code: RalphCode.INTERRUPTED, output: 'the check was cancelled' };
      else verdict = { verified: r.exitCode === 0 && !r.timedOut, exitCode: r.exitCode, output: r.timedOut ? `timed out after ${VERIFY_TIMEOUT_MS} ms\n${output}` : output || '(no output)', ...(r.timedOut ? { code: RalphCode.TIMEOUT } : {}) };
    } catch (err) {
      // A command the sandbox cannot confine never runs: the claim is not verified (I11).
      const e = err as { code?: string; message?: string };
      verdict = { verified: false, code: e.code ?? RalphCode.VERIFY_FAILED, output: `the command did not run: ${e.message ?? String(err)}` };
    }
    s.record({ kind: 'ralph/verdict', round: n, by, ...verdict });
    d.say(`ralph: ${verdict.verified ? 'verified' : `rejected${verdict.exitCode !== undefined && verdict.exitCode !== null ? ` (exit ${verdict.exitCode})` : ''}`}${verdict.verified ? '' : `: ${tail(verdict.output, 300)}`}`);
    return;
  }
  const id = ralphVerifierSessionId(s.id, n, st.attempts.get(n) ?? 1);
  const captured: Captured<Verdict> = {};
  const vid = uniqueVerifier(s, id);
  const child = s.child({ id: vid, depth: s.depth + 1, approval: 'never', tools: VERIFIER_TOOLS, scoped: [verdictTool(captured)], ...d.watch?.(vid) });
  s.record({ kind: 'ralph/verify', round: n, by, child: child.id });
  await s.flush?.();
  d.say(`ralph: a verifier agent checks round ${n}'s claim, log: ${child.location}`);
  const { out, text } = await runChild(child, verifierPrompt(st.plan.objective, n, claim), d.signal);
  const v = captured.value;
  const uncited = v ? v.citations.filter((c) => !cited(child.entries(), c)) : [];
  const verdict = d.signal.aborted
    ? { verified: false, code: RalphCode.INTERRUPTED, output: 'the check was cancelled' }
    : !v
      ? { verified: false, code: RalphCode.NO_VERDICT, output: `the verifier ended ${out.reason} without a verdict${text ? `: ${tail(text, 400)}` : ''}` }
      : uncited.length > 0
        ? { verified: false, code: RalphCode.UNCITED, output: `the verifier cited ${uncited.join(', ')}, which it never read; its verdict does not count. It said: ${tail(v.evidence, 600)}` }
        : { verified: v.verified, output: tail(`${v.evidence}\n(read: ${v.citations.join(', ')})`, VERDICT_OUTPUT_CHARS) };
  s.record({ kind: 'ralph/verdict', round: n, by, ...verdict });
  d.say(`ralph: the verifier agent ${verdict.verified ? 'verified the claim' : `rejected it${'code' in verdict ? ` (${verdict.code})` : ''}`}: ${tail(verdict.output, 300)}`);
}

/** A verifier of a round checked again (after an interrupted check) gets a log of its own. */
function uniqueVerifier(s: SessionControl, id: string): string {
  const used = new Set(s.entries().flatMap((e) => (e.kind === 'ralph/verify' && e.child ? [e.child] : [])));
  let out = id;
  for (let i = 2; used.has(out); i++) out = `${id}-${i}`;
  return out;
}
