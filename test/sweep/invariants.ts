/**
 * What must hold of every log the sweep produces, whatever the world did:
 * I1 (via the harness's request recorder), I2, I3, I4, I5, I6, I8's
 * TRANSPORT for a stream that stopped without a finish, a gapless seq, every
 * line re-parsing to the same entry, tool bodies never started without a
 * dispatch, every acknowledged input in the log and taken exactly once (or
 * still queued, only as context for a step that never came) — and
 * `verifyLog` (with checkpoint replay) from `log/verify.ts`.
 */
import { checkCheckpoints } from '../../machines/session-fold.js';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { validateCall } from '../../tools/validate-call.js';
import { checkModelVisibleIsLogged } from '../helpers/harness.js';
import type { WorldRun } from './run-world.js';
import { sweepTools } from './tools.js';
import type { ToolDefinition } from '../../ports/tools.js';

type Of<K extends Entry['kind']> = EntryOf<K>;
const ofKind = <K extends Entry['kind']>(es: readonly Entry[], k: K) => es.filter((e): e is Of<K> => e.kind === k);
const byCall = <T extends { callId: string }>(xs: readonly T[]) => {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(x.callId, [...(m.get(x.callId) ?? []), x]);
  return m;
};
const sweepDefs = sweepTools({ started: [] });
/** The tools a world's calls are checked against: the sweep's, plus (a delegation world) the harness's own `delegate`. */
let tools: readonly ToolDefinition[] = sweepDefs;
/** Read-only, or delegating (its approval class is its own: allowed under every policy, ADR 0024). */
const isReadOnly = (name: string) => tools.some((t) => t.name === name && (t.readOnly || t.delegates === true));

function logShape(run: WorldRun, es: readonly Entry[], out: string[]): void {
  es.forEach((e, i) => e.seq !== i + 1 && out.push(`seq: entry ${i + 1} has seq ${e.seq}`));
  try {
    const parsed = parseLog(run.store.text());
    if (parsed.torn) out.push(`parse: torn tail at line ${parsed.torn.line}`);
    if (JSON.stringify(parsed.entries) !== JSON.stringify(es)) out.push('parse: the stored lines do not re-parse to the recorded entries');
  } catch (err) {
    out.push(`parse: ${String(err)}`);
  }
  const verdict = verifyLog(es, { checkpoints: checkCheckpoints });
  for (const v of verdict.violations) out.push(`verifyLog: ${v.violation} at seq ${v.seq}: ${v.message}`);
}

function turns(es: readonly Entry[], out: string[]): void {
  let open: Of<'turn/start'> | undefined;
  let n = 0;
  for (const e of es) {
    if (e.kind === 'turn/start') {
      if (open) out.push(`I3: ${e.turn} starts while ${open.turn} is open`);
      if (e.turn !== `t${++n}`) out.push(`I3: turn ${n} is named ${e.turn}`);
      open = e;
    } else if (e.kind === 'turn/end') {
      if (!open || open.turn !== e.turn) out.push(`I3: turn/end for ${e.turn} without its turn/start`);
      open = undefined;
    }
  }
  if (open) out.push(`I3: ${open.turn} never ends`);
}

function calls(run: WorldRun, es: readonly Entry[], out: string[], tree: readonly (readonly Entry[])[] = [es]): void {
  const results = byCall(ofKind(es, 'tool/result'));
  const dispatches = byCall(ofKind(es, 'tool/dispatch'));
  const decisions = byCall(ofKind(es, 'approval/decided'));
  const aborted = new Set(ofKind(es, 'turn/end').filter((e) => e.reason === 'aborted').map((e) => e.turn));
  // A turn whose log could not be saved stops dispatching (DISPATCH_NOT_DURABLE) and asks the model nothing more (ADR 0017).
  const unsaved = new Set(ofKind(es, 'turn/end').filter((e) => e.code === 'LOG_NOT_DURABLE').map((e) => e.turn));
  for (const c of ofKind(es, 'tool/call')) {
    const rs = results.get(c.callId) ?? [];
    const ds = dispatches.get(c.callId) ?? [];
    const r = rs[0];
    // I2 and I5: exactly one result, after the call; nothing dangling.
    if (rs.length !== 1) out.push(`I2: ${c.callId} has ${rs.length} results`);
    if (r && r.seq < c.seq) out.push(`I2: ${c.callId}'s result comes before it`);
    if (ds.length > 1) out.push(`${c.callId} dispatched ${ds.length} times`);
    const d = ds[0];
    if (d && r && d.seq > r.seq) out.push(`${c.callId} dispatched after its result`);
    // I4: an invalid call never dispatches and is rejected naming the problem.
    const v = validateCall(tools, c.name, c.arguments);
    if (!v.ok) {
      if (d) out.push(`I4: invalid ${c.callId} (${v.code}) was dispatched`);
      // A cancel may overtake validation: then it never ran either, and says so.
      const cancelledFirst = r?.status === 'aborted' && r.code === 'ABORTED_BEFORE_DISPATCH';
      if (r && !cancelledFirst && (r.status !== 'rejected' || r.code !== v.code)) out.push(`I4: invalid ${c.callId} got ${r.status}/${r.code}, not rejected/${v.code}`);
    } else {
      if (r?.status === 'rejected') out.push(`I4: valid ${c.callId} was rejected`);
      if (r && (r.status === 'ok' || r.status === 'error') && !d) out.push(`${c.callId} has a tool's result but no dispatch`);
      // The other calls of an answer still run: a valid, allowed call in a turn nobody cancelled.
      if (!d && !aborted.has(c.turn) && !unsaved.has(c.turn) && (isReadOnly(c.name) || run.world.policy === 'auto')) out.push(`I4: valid, allowed ${c.callId} never ran`);
    }
    // I5: a cancelled call says whether it ever started.
    if (r?.status === 'aborted') {
      if (r.code === 'ABORTED_BEFORE_DISPATCH' && d) out.push(`I5: ${c.callId} ABORTED_BEFORE_DISPATCH after a dispatch`);
      else if (r.code === 'ABORTED' && !d) out.push(`I5: ${c.callId} ABORTED without a dispatch`);
      else if (r.code !== 'ABORTED' && r.code !== 'ABORTED_BEFORE_DISPATCH') out.push(`I5: ${c.callId} aborted with code ${r.code}`);
    }
    // I6: a deny is never reversed; only an allow dispatches a call that needs approval.
    const ds2 = decisions.get(c.callId) ?? [];
    if (d && ds2.some((x) => !x.outcome.startsWith('allowed-'))) out.push(`I6: ${c.callId} dispatched after a deny`);
    if (d && !isReadOnly(c.name)) {
      if (run.world.policy === 'never') out.push(`I6: ${c.callId} (${c.name}) dispatched under policy "never"`);
      const allowedNow = ds2.some((x) => x.outcome.startsWith('allowed-') && x.seq < d.seq);
      const byRule = ofKind(es, 'approval/decided').some((x) => x.outcome === 'allowed-always' && x.rule?.tool === c.name && x.seq < d.seq);
      if (run.world.policy === 'ask' && !allowedNow && !byRule) out.push(`I6: ${c.callId} (${c.name}) dispatched under "ask" without an allow`);
    }
  }
  for (const r of ofKind(es, 'tool/result')) if (!ofKind(es, 'tool/call').some((c) => c.callId === r.callId)) out.push(`I2: orphan result ${r.callId}`);
  // A tool body starts only after its dispatch is logged.
  for (const name of new Set(run.ledger.started)) {
    const started = run.ledger.started.filter((n) => n === name).length;
    // A dispatch that could not be made durable does not run its tool.
    // The tool bodies of a whole delegation tree share one ledger: count the dispatches of every log in it.
    const all = tree.flat();
    const dispatched = ofKind(all, 'tool/dispatch').filter((d) => d.name === name).length - ofKind(all, 'tool/result').filter((r) => r.name === name && r.code === 'DISPATCH_NOT_DURABLE').length;
    if (started > dispatched) out.push(`${name} ran ${started} times, dispatched durably ${dispatched}`);
  }
}

/** Save before notify (ADR 0017): once a flush of a turn's entries failed, that turn asks the model nothing more and ends LOG_NOT_DURABLE (or aborted, when a cancel came first). */
function unsaved(es: readonly Entry[], out: string[]): void {
  let turn: string | undefined;
  let failedAt: number | undefined;
  for (const e of es) {
    if (e.kind === 'turn/start') [turn, failedAt] = [e.turn, undefined];
    // The failed save of an input is its sender's to hear of (ADR 0021); the turn's own saves may still succeed.
    else if (e.kind === 'log/not-durable' && turn && e.input === undefined) failedAt ??= e.seq;
    else if (e.kind === 'step/start' && failedAt !== undefined) out.push(`save before notify: ${e.step} started after the flush noted at seq ${failedAt} failed`);
    else if (e.kind === 'turn/end') {
      if (failedAt !== undefined && e.code !== 'LOG_NOT_DURABLE' && e.reason !== 'aborted' && e.code !== 'LOG_APPEND_FAILED' && e.code !== 'LOG_ENTRY_REJECTED') out.push(`save before notify: ${e.turn} ended ${e.reason} ${e.code ?? ''} after a flush failed`);
      [turn, failedAt] = [undefined, undefined];
    }
  }
}

/** I2, the model's side: after each answer, its results are read in call order. */
function callOrder(es: readonly Entry[], out: string[]): void {
  const ms = deriveMessages(es);
  ms.forEach((m, i) => {
    if (m.role !== 'assistant' || !m.toolCalls) return;
    const want = m.toolCalls.map((c) => c.id);
    const got: string[] = [];
    for (let j = i + 1; j < ms.length && ms[j]!.role === 'tool'; j++) got.push((ms[j] as { toolCallId: string }).toolCallId);
    if (JSON.stringify(got) !== JSON.stringify(want)) out.push(`I2: results read as ${got.join(',')} after calls ${want.join(',')}`);
  });
}

/** I8: a stream that stopped without a finish is a TRANSPORT failure, one that stalled past its deadline TIMEOUT; never a success. */
function cutStreams(run: WorldRun, es: readonly Entry[], out: string[]): void {
  run.model.replies.forEach((reply, i) => {
    if (reply.kind !== 'cut' && reply.kind !== 'throw' && reply.kind !== 'stall') return;
    const at = run.requestOfReply?.[i] ?? i;
    const req = run.h.requests[at];
    // A compaction's summary request fails into compaction/end, not into a step.
    if (!req || isSummaryInstruction(req.request.messages.at(-1))) return;
    const until = run.h.requests[at + 1]?.entries ?? es.length;
    const next = es.slice(req.entries, until).find((e) => e.kind === 'model/retry' || e.kind === 'assistant/message' || e.kind === 'step/end');
    // Through a wire, a model that throws is a connection that failed: the provider says TRANSPORT.
    const want = reply.kind === 'cut' ? 'TRANSPORT' : reply.kind === 'stall' ? 'TIMEOUT' : run.wire ? 'TRANSPORT' : 'UNKNOWN';
    if (next?.kind === 'model/retry' && next.code !== want) out.push(`I8: request ${i + 1} ${reply.kind} was retried as ${next.code}, not ${want}`);
    if (next?.kind === 'assistant/message' && next.finish.kind === 'ok') out.push(`I8: request ${i + 1} ${reply.kind} was taken for a success`);
    if (next?.kind === 'assistant/message' && next.finish.kind === 'error' && next.finish.code !== want) out.push(`I8: request ${i + 1} ${reply.kind} ended ${next.finish.code}, not ${want}`);
  });
}

/** Nothing acknowledged is lost (ADR 0021): each input the session said it received is logged with its text and mode, and taken once; at rest, only an inject may still wait. */
function inputs(run: WorldRun, es: readonly Entry[], out: string[]): void {
  const bySeq = new Map(es.map((e) => [e.seq, e]));
  const taken = new Map<number, number>();
  for (const e of es) if ((e.kind === 'turn/start' || e.kind === 'user/message') && e.from !== undefined) taken.set(e.from, (taken.get(e.from) ?? 0) + 1);
  for (const a of run.acked) {
    const e = bySeq.get(a.seq);
    if (e?.kind !== 'session/input' || e.text !== a.text || e.mode !== a.mode) out.push(`input: acknowledged as seq ${a.seq}, which is not that session/input`);
    const n = taken.get(a.seq) ?? 0;
    if (n > 1) out.push(`input: seq ${a.seq} was taken ${n} times`);
    // A followup or steer the session received runs, unless a save failure ended the session's turns first.
    if (n === 0 && a.mode !== 'inject' && !run.world.flushFault && run.settled) out.push(`input: seq ${a.seq} (${a.mode}) was acknowledged and never ran`);
  }
  // A save that failed is said: an input refused for it is not also in the log as taken.
  if (!run.world.flushFault && run.refusedInputs.length > 0) out.push(`input: ${run.refusedInputs.length} refused with no failing store: ${run.refusedInputs[0]!.error}`);
}

export interface TreeCheck {
  /** Tools besides the sweep's that calls may name (the harness's `delegate`). */
  extra: readonly ToolDefinition[];
  /** The children's logs: their tool bodies ran on the same ledger. */
  children: readonly (readonly Entry[])[];
  /** Which recorded requests are the parent's (the model is shared by the whole tree). */
  isParents: (request: WorldRun['h']['requests'][number]) => boolean;
}

/**
 * Contract: every problem with the run's log, in words; empty when all invariants hold. With `tree`, the log is
 * the root of a delegation tree: I1 is checked on the parent's own requests, and I8's cut streams, whose replies
 * interleave across the tree's sessions, are left to the plain sweep.
 */
export function checkWorld(run: WorldRun, tree?: TreeCheck): string[] {
  tools = [...sweepDefs, ...(tree?.extra ?? [])];
  const out: string[] = [];
  if (!run.settled) out.push(`the session never came to rest (state ${JSON.stringify(run.h.session.actor.getSnapshot().value)})`);
  // A log append that failed (hostile usage) ends its turn; it never takes the session down.
  if (run.h.session.actor.getSnapshot().status !== 'active') out.push(`the session crashed: ${String(run.h.session.actor.getSnapshot().error)}`);
  const es = run.h.entries();
  logShape(run, es, out);
  turns(es, out);
  calls(run, es, out, [es, ...(tree?.children ?? [])]);
  callOrder(es, out);
  unsaved(es, out);
  if (!tree) cutStreams(run, es, out);
  inputs(run, es, out);
  const h = tree ? { ...run.h, requests: run.h.requests.filter(tree.isParents) } : run.h;
  out.push(...checkModelVisibleIsLogged(h).map((p) => `I1: ${p}`));
  return out;
}
