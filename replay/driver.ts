/**
 * The replay driver. Each segment of the log (one per process) runs through
 * a real session whose seams answer from the log behind gates. The driver
 * lets the machines run until nothing moves, then looks at the next entry
 * the log holds and does what produced it: opens the gate that leads to it,
 * re-issues the cancel that caused it, sends the input that started it, or
 * copies it when no machine writes it (a hook's report). Input a turn took
 * mid-way is sent at the delivery point the log shows it at, and the inbox a
 * checkpoint holds is rebuilt before the turn settles. Every appended line
 * is compared at once; the first difference stops the replay.
 */
import type { InspectionEvent } from 'xstate';
import type { Draft, Entry, EntryOf, SessionConfig } from '../log/entries.js';
import { LogAppendError } from '../log/errors.js';
import { Recorder } from '../log/recorder.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import type { CompactionContext } from '../machines/compaction.machine.js';
import type { TurnContext } from '../machines/turn.machine.js';
import { toolSpec } from '../tools/index.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { LogStore } from '../ports/store.js';
import { createSession, type BridleSession } from '../runtime/session.js';
import { NotReplayableError } from './errors.js';
import { Gates } from './gates.js';
import { inboxPlan, leftoverSends, type Send } from './inbox.js';
import { replayAnswerer, replayModel, replayPlugin, replayPreStep, ReplayPrompt, type Progress } from './providers.js';
import { followupOf, isCancelEffect, isForeign, scriptOf, type ReplayScript, type TurnScript } from './script.js';
import { segmentsOf, type Segment } from './segments.js';
import { checkTools, headerChanges, segmentSetup } from './setup.js';

export interface ReplayOutcome {
  lines: string[];
  /** 0-based index of the first line that differs or is missing, and why when replay knows. */
  difference?: { index: number; note?: string };
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
const isTurnEndAborted = (e: Entry | undefined) => e?.kind === 'turn/end' && e.reason === 'aborted';
const isCompactionInterrupted = (e: Entry | undefined) => e?.kind === 'compaction/end' && e.outcome === 'interrupted';
const isSettledAbort = (e: Entry | undefined) => (e?.kind === 'step/end' || e?.kind === 'turn/end') && e.reason === 'aborted';

interface Live {
  /** Tells this segment's inspection events from a stopped one's. */
  token: object;
  session: BridleSession;
  gates: Gates;
  prompt: ReplayPrompt;
  seg: Segment;
}

export class ReplayDriver {
  private readonly script: ReplayScript;
  private readonly lines: string[];
  private readonly stamps: number[];
  private readonly headers: Map<number, string>;
  private readonly out: Entry[] = [];
  private readonly outLines: string[] = [];
  private activity = 0;
  /** Lines beyond this index are not the live segment's: its process had ended there. */
  private limit = 0;
  private sealed = false;
  private difference?: ReplayOutcome['difference'];
  private fatal?: unknown;
  private live?: Live;
  private progress: Progress = { retries: 0, compaction: -1 };
  private cancelledAt = -1;
  private readonly turnPoint = new Map<string, string>();
  private readonly delivered = new Set<string>();
  private ending?: TurnScript;
  private copying = false;
  /** The flushes the log notes as failed, by the seq each was to make durable, in log order. */
  private readonly unsaved = new Map<number, EntryOf<'log/not-durable'>[]>();
  private readonly noted = new Set<number>();

  constructor(
    private readonly original: readonly Entry[],
    private readonly tools: readonly ToolDefinition[],
    private readonly config: SessionConfig,
  ) {
    this.script = scriptOf(original);
    this.lines = original.map((e) => JSON.stringify(e));
    this.stamps = original.map((e) => Date.parse(e.at));
    this.headers = headerChanges(original);
    for (const e of original) {
      if (e.kind !== 'log/not-durable') continue;
      this.unsaved.set(e.upTo, [...(this.unsaved.get(e.upTo) ?? []), e]);
      this.noted.add(e.upTo);
    }
    checkTools(original, tools);
  }

  /** Contract: resolves with the replayed lines (up to and including the first that differs); throws `NotReplayableError` for what replay cannot time. */
  async run(): Promise<ReplayOutcome> {
    // session/start is the host's header, not a machine's entry: replay starts from it.
    this.out.push(this.original[0]!);
    this.outLines.push(this.lines[0]!);
    const segments = segmentsOf(this.original);
    for (const [k, seg] of segments.entries()) {
      this.limit = seg.to;
      this.sealed = this.out.length >= seg.to;
      const live = this.open(seg, k);
      await this.drive(live, k === segments.length - 1);
      await this.stop(live);
      if (this.fatal) throw this.fatal;
      if (this.difference) break;
      if (seg.closing) this.appendClosing(seg.closing);
      if (this.difference) break;
    }
    return { lines: this.outLines, ...(this.difference ? { difference: this.difference } : {}) };
  }

  private readonly clock = () => this.stamps[Math.min(this.out.length, this.stamps.length - 1)]!;

  private accept(entry: Entry, line: string): void {
    if (this.sealed || this.difference) return;
    const i = this.out.length;
    const want = this.original[i];
    // Where a live append failed and its turn was closed, the replayed append fails the same way.
    if (want?.kind === 'repair' && want.found === 'turn-fault' && line !== this.lines[i]) throw this.faultAt(i, entry);
    this.out.push(entry);
    this.outLines.push(line);
    this.activity++;
    if (entry.kind === 'step/start') this.progress = { ...this.progress, step: entry.step, retries: 0 };
    else if (entry.kind === 'model/retry') this.progress = { ...this.progress, retries: this.progress.retries + 1 };
    else if (entry.kind === 'compaction/start') this.progress = { ...this.progress, compaction: i };
    // The prompt the original turn or step was assembled with, before its request is built.
    if (entry.kind === 'turn/start' || entry.kind === 'step/start') this.live?.prompt.show(this.headers.get(i));
    if (line !== this.lines[i]) {
      this.difference = { index: i };
      this.sealed = true;
    } else if (this.out.length >= this.limit) this.sealed = true;
  }

  /** The failure a `turn-fault` repair records, as its turn's end states it: code and cause; the entry that failed goes with it (its closing may keep a result). */
  private faultAt(i: number, entry: Entry): Error {
    const end = this.original.slice(i).find((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end');
    const cause = end?.cause ?? '';
    const { seq: _seq, at: _at, ...draft } = entry;
    return end?.code === 'LOG_ENTRY_REJECTED' || end?.code === 'LOG_APPEND_FAILED' ? new LogAppendError(end.code, entry.kind, cause, { draft: draft as Draft }) : new Error(cause);
  }

  private store(): LogStore {
    return { location: 'replay:', append: (e, line) => this.accept(e, line), flush: () => this.flush(), close: async () => {} };
  }

  /**
   * Flushes wait behind silent gates, so a cancel can land between a result and its flush. A flush the log
   * notes as failed (`log/not-durable` with its `upTo`) fails again, with the store error the note holds, when
   * the note is next; so does a failed dispatch flush of a log written before notes.
   */
  private flush(): Promise<void> {
    const live = this.live;
    if (!live || this.sealed) return Promise.resolve();
    const upTo = this.out.at(-1)?.seq ?? 0;
    const failed = this.unsaved.get(upTo);
    if (failed && failed.length > 0) {
      const note = failed.shift()!;
      return live.gates.wait({ leadsTo: (e) => e.kind === 'log/not-durable' && e.upTo === upTo }, () => {
        throw Object.assign(new Error(note.detail), note.sysCode !== undefined ? { code: note.sysCode } : {});
      });
    }
    const last = this.out.at(-1);
    if (last?.kind === 'tool/dispatch' && this.script.calls.get(last.callId)?.notDurable && !this.noted.has(last.seq)) {
      const id = last.callId;
      return live.gates.wait({ leadsTo: (e) => e.kind === 'tool/result' && e.callId === id }, () => {
        throw new Error('replay: the dispatch was not made durable');
      });
    }
    return live.gates.wait({ silent: true }, () => undefined);
  }

  private open(seg: Segment, k: number): Live {
    const start = this.original[0] as EntryOf<'session/start'>;
    const setup = segmentSetup(this.original, seg, this.config);
    const gates = new Gates(() => this.activity++);
    const prompt = new ReplayPrompt(setup.system, this.tools.map(toolSpec));
    const existing = this.out.slice();
    let snapshot: ReturnType<typeof restoreSessionSnapshot> | undefined;
    if (k > 0) {
      try {
        snapshot = restoreSessionSnapshot(existing, { ...(setup.maxSteps !== undefined ? { maxSteps: setup.maxSteps } : {}), ...(setup.retry ? { retry: setup.retry } : {}) });
      } catch {
        snapshot = undefined;
      }
    }
    const c = this.config;
    const token = {};
    // The product replay runs: the base rows, every outcome answered from the log, nothing that could touch the world.
    const session = createSession({
      id: start.id,
      cwd: start.cwd,
      bridleHome: '/nonexistent-bridle-home',
      settings: { approval: 'auto', sandbox: 'off' },
      patch: [
        { id: 'guard:repeat-call', remove: true },
        // A replayed call never reaches a tool (replayPlugin answers from the log); were one to, it would find no file and run no command.
        { id: 'fs', use: 'memory' },
        { id: 'subprocess', use: 'memory' },
        { id: 'turn', use: 'limits', config: setup.maxSteps !== undefined ? { maxSteps: setup.maxSteps } : {} },
        ...(setup.retry ? [{ id: 'recovery:retry', use: 'retry', config: setup.retry }] : []),
        {
          id: 'compaction',
          use: 'compaction',
          config: { ...(c.contextWindow !== undefined ? { window: c.contextWindow } : {}), ...(c.compactThreshold !== undefined ? { threshold: c.compactThreshold } : {}), ...(c.compaction ?? {}) },
        },
      ],
      services: {
        model: { ...replayModel(this.script, () => this.progress), name: setup.modelName },
        store: this.store(),
        clock: this.clock,
        tools: [...this.tools],
        prompt,
      },
      plugins: [replayPlugin(this.script, gates)],
      answerer: replayAnswerer(this.script, gates),
      sleep: async () => {},
      preStep: replayPreStep(this.script),
      existing,
      depth: start.depth,
      parent: start.parent,
      inspect: (ev) => this.inspect(ev, token),
      ...(snapshot ? { snapshot } : {}),
    });
    session.recorder.onEntry(() => this.guard(() => this.copyForeign()));
    this.live = { token, session, gates, prompt, seg };
    return this.live;
  }

  private async stop(live: Live): Promise<void> {
    this.sealed = true;
    live.gates.drop();
    this.live = undefined;
    await live.session.close();
  }

  /** The machines run until nothing moves; then the next logged entry says what to do. */
  private async drive(live: Live, last: boolean): Promise<void> {
    let budget = 8 * (live.seg.to - this.out.length) + 64;
    for (;;) {
      await this.settle();
      if (this.fatal || this.difference) return;
      if (this.out.length >= live.seg.to) break;
      if (budget-- <= 0 || !this.act(live)) {
        const next = this.original[this.out.length];
        this.difference = { index: this.out.length, note: `replay stopped: nothing the machines can do now writes the log's ${next?.kind ?? 'end'}` };
        return;
      }
    }
    if (!last || !this.closedAtEnd()) return;
    // A log that ends at rest must not leave the machines anything more to write.
    const before = live.session.recorder.entries.length;
    live.gates.oldestSilent()?.open();
    await this.settle();
    if (live.session.recorder.entries.length > before) this.difference = { index: this.out.length, note: 'replay went on past the end of the log' };
  }

  private closedAtEnd(): boolean {
    return this.original.filter((e) => e.kind === 'turn/start').length === this.original.filter((e) => e.kind === 'turn/end').length;
  }

  private async settle(): Promise<void> {
    for (;;) {
      const mark = this.activity;
      await macrotask();
      if (mark === this.activity) return;
    }
  }

  private act(live: Live): boolean {
    const n = this.out.length;
    const next = this.original[n];
    const snap = live.session.actor.getSnapshot();
    if (this.ending) {
      this.reconcile(live, this.ending);
      this.ending = undefined;
      return true;
    }
    if (isForeign(next)) return this.copyForeign(), true;
    if (isCancelEffect(next) && snap.value !== 'idle' && this.cancelIf(live, () => true)) return true;
    // A cancel that landed while a flush that failed was pending touched nothing that logs at once (the call waits on its
    // flush): it shows only as the aborted step or turn the failure's note leads to, in the same transition. It is
    // re-issued before the flush fails again. (One that landed after the note shows at once: a decision, a result.)
    if (next?.kind === 'log/not-durable' && snap.value !== 'idle' && isSettledAbort(this.afterNotes(n)) && this.cancelIf(live, () => true)) return true;
    const named = live.gates.leadingTo(next);
    if (named) return named.open(), true;
    if (snap.value === 'idle' && snap.context.followups.length === 0) {
      if (next?.kind === 'turn/start') {
        const pre = this.script.turns.get(next.turn)?.preStep;
        this.send(live, { text: next.input, mode: 'followup' }, pre?.kind === 'enter' ? pre.origin : undefined);
        return true;
      }
      if (next?.kind === 'compaction/start' && next.trigger === 'manual') {
        live.session.actor.send({ type: 'session.compact.requested' });
        this.activity++;
        return true;
      }
    }
    const silent = live.gates.oldestSilent();
    if (silent) return silent.open(), true;
    return false;
  }

  /** The first entry at or after `i` that is not a `log/not-durable` note. */
  private afterNotes(i: number): Entry | undefined {
    while (this.original[i]?.kind === 'log/not-durable') i++;
    return this.original[i];
  }

  private send(live: Live, s: Send, origin = s.origin): void {
    const f = followupOf(s.text, origin);
    live.session.actor.send({ type: 'session.input.received', text: s.text, mode: s.mode, ...(typeof f === 'object' ? { origin: f.origin } : {}) });
    this.activity++;
  }

  /** Once per point in the log: a cancel whose effect is the next entry. */
  private cancelIf(live: Live, wanted: (e: Entry | undefined) => boolean): boolean {
    const n = this.out.length;
    if (this.cancelledAt === n || !wanted(this.original[n])) return false;
    this.cancelledAt = n;
    this.activity++;
    // Steer and inject that were still queued when the cancel came end up as the turn's leftovers: queue them first.
    const s = live.session.actor.getSnapshot();
    const turn = s.children.turn?.getSnapshot().context as TurnContext | undefined;
    const target = turn && this.script.turns.get(turn.turn)?.checkpoint;
    if (turn && target && s.matches({ running: 'active' })) {
      for (const x of leftoverSends({ turnSteer: turn.steer, turnInject: turn.inject }, target) ?? []) this.send(live, x);
    }
    live.session.actor.send({ type: 'session.cancel.requested', cause: 'replay' });
    return true;
  }

  private copyForeign(): void {
    const live = this.live;
    if (!live || this.copying) return;
    this.copying = true;
    try {
      while (!this.sealed && isForeign(this.original[this.out.length])) {
        const { seq: _seq, at: _at, ...draft } = this.original[this.out.length]!;
        live.session.recorder.append(draft as Draft);
      }
    } finally {
      this.copying = false;
    }
  }

  private guard(f: () => void): void {
    try {
      f();
    } catch (err) {
      this.fatal ??= err;
      this.sealed = true;
    }
  }

  /**
   * Snapshots of the turn and compaction actors: moments input and cancels must land at that no gate waits at.
   * (Not the step's or a call's: a cancel sent from inside a call's own transition would reach it after its
   * neighbours, out of call order; the step's calls all wait on gates, so quiescence serves them.)
   */
  private inspect(ev: InspectionEvent, token: object): void {
    if (ev.type !== '@xstate.snapshot' || this.live?.token !== token || this.sealed) return;
    const snap = ev.snapshot as unknown as { status: string; value: unknown; context: unknown };
    if (snap.status !== 'active') return;
    const live = this.live;
    this.guard(() => {
      const id = (ev.actorRef as { id?: string }).id;
      // A turn that crashed ends in the session's `faulted` state, not its own `ending`: the inbox is reconciled there.
      if (ev.actorRef === live.session.actor && snap.value === 'faulted') this.ending = this.script.turns.get(`t${(snap.context as { turns: number }).turns}`);
      else if (id === 'turn') this.onTurn(live, snap.value as string, snap.context as TurnContext);
      else if (id === 'compaction') this.onCompaction(live, snap.value as string, snap.context as CompactionContext);
    });
  }

  /**
   * A compaction measures, prunes and plans without waiting on anything replay holds: a cancel that landed
   * there is re-issued as soon as it is in that state. A manual one cancelled before it measured logged nothing.
   */
  private onCompaction(live: Live, value: string, c: CompactionContext): void {
    if (value === 'measuring' && c.trigger === 'manual') this.cancelIf(live, (e) => e?.kind !== 'compaction/start');
    else if (value === 'pruning' || value === 'remeasuring' || value === 'planning') this.cancelIf(live, isCompactionInterrupted);
  }

  private onTurn(live: Live, value: string, c: TurnContext): void {
    const point = `${value}:${c.steps}`;
    if (this.turnPoint.get(c.turn) === point) return;
    this.turnPoint.set(c.turn, point);
    const t = this.script.turns.get(c.turn);
    if (!t) return;
    if (value === 'preStep') this.deliver(live, t, 'measuring:0', c.inject.length);
    else if (value === 'stepping') this.deliver(live, t, `measuring:${c.steps}`);
    else if (value === 'measuring' || value === 'compacting') {
      this.deliver(live, t, `stepping:${c.steps + 1}`);
      this.cancelIf(live, isTurnEndAborted);
    } else if (value === 'ending') this.ending = t;
  }

  /** Sends the steer and inject a delivery point logged; `claimed` injects the turn already holds from the session's queue. */
  private deliver(live: Live, t: TurnScript, point: string, claimed = 0): void {
    const key = `${t.turn}@${point}`;
    if (this.delivered.has(key)) return;
    this.delivered.add(key);
    let skip = claimed;
    for (const d of t.deliveries.get(point) ?? []) {
      if (d.mode === 'inject' && skip > 0) skip--;
      else this.send(live, d);
    }
  }

  /** While the turn ends (its end not yet flushed), input that leaves the inbox its checkpoint shows. */
  private reconcile(live: Live, t: TurnScript): void {
    const target = t.checkpoint;
    if (!target) return;
    const s = live.session.actor.getSnapshot();
    const turn = s.children.turn?.getSnapshot().context as TurnContext | undefined;
    // A crashed turn took its queued steer and inject with it: input now joins the session's side, as while cancelling.
    const faulted = s.matches('faulted');
    if (!turn && !faulted) return;
    const plan = inboxPlan({ active: !faulted && !s.matches({ running: 'cancelling' }), turnSteer: turn?.steer ?? [], turnInject: turn?.inject ?? [], followups: s.context.followups, injects: s.context.injects }, target);
    if (!plan) throw new NotReplayableError(`the inbox the checkpoint after ${t.turn} holds cannot be reproduced by input sent while the turn ends`);
    for (const x of plan.leftovers) this.send(live, x);
    if (plan.cancel) live.session.actor.send({ type: 'session.cancel.requested', cause: 'replay' });
    for (const x of plan.queued) this.send(live, x);
    if (target.compactPending === true && s.context.compactPending !== true) {
      live.session.actor.send({ type: 'session.compact.requested' });
      this.activity++;
    }
  }

  /** A repair's entries, appended as `log/repair.ts` planned them (a recorder of their own, the log's clock). */
  private appendClosing(drafts: readonly Draft[]): void {
    this.sealed = false;
    this.limit = this.out.length + drafts.length;
    const recorder = new Recorder({ location: 'replay:', append: (e, line) => this.accept(e, line), flush: async () => {}, close: async () => {} }, this.clock, this.out.slice());
    for (const d of drafts) if (!this.difference) recorder.append(d);
  }
}
