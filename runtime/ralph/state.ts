/**
 * Where a Ralph run stands, read from its log alone: the immutable
 * objective, the round cap, how a claim of complete is checked, the handoff
 * the next round gets, and what a crash left open (a round or a check with
 * no end), so that `bridle resume` continues at the round it was in. The
 * loop decides its next step from this and nothing else.
 */
import { type Handoff, HANDOFF_CAP_BYTES, RalphCode } from '../../log/entries-ralph.js';
import type { Entry, EntryOf } from '../../log/entries.js';

export interface RalphPlan {
  objective: string;
  rounds: number;
  verify: string | null;
  verifier: boolean;
}

export type Check = 'command' | 'agent';

export interface RalphState {
  plan: RalphPlan;
  /** Rounds whose handoff is logged. */
  done: number;
  /** What the next round receives: the last handoff (after a rejected claim, with the verifier's output as its evidence). */
  handoff?: Handoff;
  /** A round's claim of complete, and the checks of it so far. */
  claim?: { round: number; handoff: Handoff; done: Check[]; rejected: string[] };
  /** Started and never ended: a round's child, or a check (only a crash leaves one). */
  open?: { kind: 'round'; round: number; attempt: number; child: string } | { kind: 'verify'; round: number; by: Check; child?: string };
  attempts: Map<number, number>;
  ended?: EntryOf<'ralph/end'>;
}

export type Next =
  | { kind: 'close-round'; round: number; child: string }
  | { kind: 'close-check'; round: number; by: Check }
  | { kind: 'check'; round: number; by: Check; claim: Handoff }
  | { kind: 'round'; round: number; attempt: number; handoff?: Handoff }
  | { kind: 'end'; outcome: 'verified' | 'exhausted' | 'blocked'; round: number; blockerText?: string }
  | { kind: 'stop' };

const bytes = (h: Handoff) => Buffer.byteLength(JSON.stringify(h), 'utf8');

/** Contract: pure; undefined when the handoff's JSON is within `cap` bytes, else why not (for the child to fix). */
export function checkCap(h: Handoff, cap = HANDOFF_CAP_BYTES): string | undefined {
  const n = bytes(h);
  return n > cap ? `the handoff is ${n} bytes of JSON; the cap is ${cap}: shorten summary, evidence or nextSteps and call handoff again` : undefined;
}

/** Cuts one field (by code points, with a note) so the handoff fits the cap: only for text the harness writes, never a child's own handoff. */
export function fit(h: Handoff, field: 'summary' | 'evidence', cap = HANDOFF_CAP_BYTES): Handoff {
  if (bytes(h) <= cap) return h;
  const note = ' [cut to fit the handoff cap]';
  let points = [...h[field]];
  let out = h;
  while (bytes(out) > cap && points.length > 0) {
    points = points.slice(0, Math.max(0, points.length - Math.max(16, bytes(out) - cap)));
    out = { ...h, [field]: `${points.join('')}${note}` };
  }
  return out;
}

/** The handoff the round after a rejected claim gets: the claim's own, as `continue`, with what the verifier said as its evidence. */
export function afterRejection(claim: Handoff, round: number, rejected: readonly string[], cap = HANDOFF_CAP_BYTES): Handoff {
  const evidence = `An independent verifier rejected round ${round}'s claim of complete.\n${rejected.join('\n')}`;
  const base: Handoff = { status: 'continue', summary: claim.summary, evidence, ...(claim.nextSteps ? { nextSteps: claim.nextSteps } : {}) };
  return fit(fit(base, 'evidence', cap), 'summary', cap);
}

/** The checks a claim of complete needs, in the order they run: the `--verify` command, then the verifier agent. */
export const checksOf = (plan: RalphPlan): Check[] => [...(plan.verify !== null ? (['command'] as const) : []), ...(plan.verifier ? (['agent'] as const) : [])];

type RalphEntry = EntryOf<'ralph/start' | 'ralph/round' | 'ralph/handoff' | 'ralph/verify' | 'ralph/verdict' | 'ralph/end'>;
const isRalph = (e: Entry): e is RalphEntry => e.kind.startsWith('ralph/');

/** Contract: pure; undefined for a log that is not a Ralph run's. */
export function ralphState(entries: readonly Entry[]): RalphState | undefined {
  const start = entries.find((e): e is EntryOf<'ralph/start'> => e.kind === 'ralph/start');
  if (!start) return undefined;
  const s: RalphState = { plan: { objective: start.objective, rounds: start.rounds, verify: start.verify, verifier: start.verifier }, done: 0, attempts: new Map() };
  for (const e of entries.filter(isRalph)) {
    switch (e.kind) {
      case 'ralph/round':
        // A rejected claim's round is over: the next one gets the claim with the verifier's output as its evidence.
        if (s.claim) s.handoff = afterRejection(s.claim.handoff, s.claim.round, s.claim.rejected);
        s.claim = undefined;
        s.attempts.set(e.round, e.attempt);
        s.open = { kind: 'round', round: e.round, attempt: e.attempt, child: e.child };
        break;
      case 'ralph/handoff':
        s.open = undefined;
        if (e.source === 'interrupted') break;
        s.done = e.round;
        s.handoff = e.handoff;
        if (e.handoff.status === 'complete') s.claim = { round: e.round, handoff: e.handoff, done: [], rejected: [] };
        break;
      case 'ralph/verify':
        s.open = { kind: 'verify', round: e.round, by: e.by, ...(e.child ? { child: e.child } : {}) };
        break;
      case 'ralph/verdict':
        s.open = undefined;
        // An interrupted check is run again; it never counts as a verdict.
        if (e.code === RalphCode.INTERRUPTED || !s.claim) break;
        s.claim.done.push(e.by);
        if (!e.verified) s.claim.rejected.push(`${e.by === 'command' ? 'The --verify command' : 'The verifier agent'} said: ${e.output}`);
        break;
      case 'ralph/end':
        // A cancelled run is paused, not over: `bridle resume` goes on with the round it stopped in.
        s.ended = e.outcome === 'cancelled' ? undefined : e;
        break;
    }
  }
  return s;
}

/** Contract: pure; what the loop does next, from the state alone. */
export function nextStep(s: RalphState): Next {
  if (s.ended) return { kind: 'stop' };
  if (s.open?.kind === 'round') return { kind: 'close-round', round: s.open.round, child: s.open.child };
  if (s.open?.kind === 'verify') return { kind: 'close-check', round: s.open.round, by: s.open.by };
  if (s.claim) {
    const left = checksOf(s.plan).filter((c) => !s.claim!.done.includes(c));
    if (left.length > 0) return { kind: 'check', round: s.claim.round, by: left[0]!, claim: s.claim.handoff };
    if (s.claim.rejected.length === 0) return { kind: 'end', outcome: 'verified', round: s.claim.round };
  }
  if (s.handoff?.status === 'blocked') return { kind: 'end', outcome: 'blocked', round: s.done, blockerText: s.handoff.blockerText ?? s.handoff.summary };
  if (s.done >= s.plan.rounds) return { kind: 'end', outcome: 'exhausted', round: s.done };
  const handoff = s.claim ? afterRejection(s.claim.handoff, s.claim.round, s.claim.rejected) : s.handoff;
  const round = s.done + 1;
  return { kind: 'round', round, attempt: (s.attempts.get(round) ?? 0) + 1, ...(handoff ? { handoff } : {}) };
}
