/**
 * The replay driver. Each segment of the log (one per process) runs through
 * a real session whose seams answer from the log behind gates. The driver
 * lets the machines run until nothing moves, then looks at the next entry
 * the log holds and does what produced it: sends the input, cancel,
 * compaction or end that reached the session (they are entries, ADR 0021),
 * opens the gate that leads to it, or copies it when no machine writes it (a
 * hook's report). It never looks at a machine's state: where an input
 * landed is where the log holds it. Every appended line is compared at
 * once; the first difference stops the replay.
 */
import { type Draft, type Entry, type EntryOf, INPUT_KINDS } from '../log/entries.js';
import type { SessionConfig } from '../log/entries-session.js';
import { loggedWorkspace } from '../runtime/session-policy.js';
import { LogAppendError, LogAppendCode } from '../log/errors.js';
import { Recorder } from '../log/recorder.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { toolSpec } from '../tools/index.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { LogStore } from '../log/store.js';
import { createSession } from '../runtime/session.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { OfferedLoop } from '../runtime/loop-identity.js';
import { Gates } from './gates.js';
import { replayAnswerer, replayModel, replayPlugin, replayPreStep, ReplayPrompt, type Progress } from './providers.js';
import { isForeign, scriptOf, type ReplayScript } from './script.js';
import { segmentsOf, type Segment } from './segments.js';
import { checkTools, headerChanges, segmentSetup } from './setup.js';

export interface ReplayOutcome {
  lines: string[];
  /** 0-based index of the first line that differs or is missing, and why when replay knows. */
  difference?: { index: number; note?: string };
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
const isInput = (e: Entry | undefined): e is EntryOf<'session/input' | 'session/cancel' | 'session/compact' | 'session/end'> => e !== undefined && INPUT_KINDS.has(e.kind);

interface Live {
  session: BridleSession;
  gates: Gates;
  seg: Segment;
  /** A reopened session holds its queued input until the log's opening is copied (what a live one's plugins logged as they started). */
  release?: () => void;
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
  /** The segment's prompt: shown each turn's and step's logged system prompt as they start. */
  private prompt?: ReplayPrompt;
  private progress: Progress = { retries: 0, compaction: -1 };
  private copying = false;
  /** The flushes the log notes as failed, by the seq each was to make durable, in log order. */
  private readonly unsaved = new Map<number, EntryOf<'log/not-durable'>[]>();
  private readonly noted = new Set<number>();

  constructor(
    private readonly original: readonly Entry[],
    private readonly tools: readonly ToolDefinition[],
    private readonly config: SessionConfig,
    /** The loop the log names, matched by the caller (ADR 0085); undefined: bridle's own. */
    private readonly loop?: OfferedLoop,
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
    if (entry.kind === 'turn/start' || entry.kind === 'step/start') this.prompt?.show(this.headers.get(i));
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
    if (end?.code === LogAppendCode.LOG_ENTRY_TOO_LARGE) return new LogAppendError(end.code, entry.kind, cause);
    return end?.code === LogAppendCode.LOG_ENTRY_REJECTED || end?.code === LogAppendCode.LOG_APPEND_FAILED ? new LogAppendError(end.code, entry.kind, cause, { draft: draft as Draft }) : new Error(cause);
  }

  private store(gates: Gates): LogStore {
    return { location: 'replay:', append: (e, line) => this.accept(e, line), flush: () => this.flush(gates), close: async () => {} };
  }

  /**
   * Flushes wait behind silent gates, so a cancel can land between a result and its flush. A flush the log
   * notes as failed (`log/not-durable` with its `upTo`) fails again, with the store error the note holds, when
   * the note is next; so does a failed dispatch flush of a log written before notes.
   */
  private flush(gates: Gates): Promise<void> {
    if (this.live?.gates !== gates || this.sealed) return Promise.resolve();
    const live = this.live;
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
    this.prompt = prompt;
    // What a writer logs as it opens (a takeover) stands before anything the new process's session runs.
    if (k > 0) this.appendClosing(this.foreignAt(this.out.length));
    this.sealed = this.out.length >= seg.to;
    this.limit = seg.to;
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
    let release: (() => void) | undefined;
    const startGate = k > 0 ? new Promise<void>((r) => (release = r)) : undefined;
    // The product replay runs: the base rows, every outcome answered from the log, nothing that could touch the world.
    // A resumed segment's session is handed the input its log left queued as it opens, as the live one was.
    const session = createSession({
      id: start.id,
      // A segment after a `--move-workspace` runs where that process ran (ADR 0041).
      cwd: loggedWorkspace(existing) ?? start.cwd,
      bridleHome: '/nonexistent-bridle-home',
      settings: { approval: 'auto', sandbox: 'off' },
      patch: [
        { id: 'guard:repeat-call', remove: true },
        // Nested AGENTS.md text is in the logged results replay hands back; adding it again would double it.
        { id: 'prompt:nested', remove: true },
        // The skills' list is in the logged system prompt, the `skill` tool stands in from the logged header, what was found is copied (`skills/found`).
        { id: 'prompt:skills', remove: true },
        // A replayed call never reaches a tool (replayPlugin answers from the log); were one to, it would find no file and run no command.
        { id: 'fs', use: 'memory' },
        { id: 'subprocess', use: 'memory' },
        { id: 'turn', use: 'limits', config: { ...(setup.maxSteps !== undefined ? { maxSteps: setup.maxSteps } : {}), ...(c.budget ? { budget: c.budget } : {}) } },
        ...(setup.retry ? [{ id: 'recovery:retry', use: 'retry', config: setup.retry }] : []),
        // The loop the log ran, the product's same module (ADR 0085).
        ...(this.loop ? [{ id: this.loop.identity.row, use: this.loop.identity.use }] : []),
        {
          id: 'compaction',
          use: 'compaction',
          config: { ...(c.contextWindow !== undefined ? { window: c.contextWindow } : {}), ...(c.compactThreshold !== undefined ? { threshold: c.compactThreshold } : {}), ...(c.compaction ?? {}) },
        },
      ],
      services: {
        model: { ...replayModel(this.script, () => this.progress, gates), name: setup.modelName, ...(setup.reasoning !== undefined ? { reasoning: setup.reasoning } : {}) },
        store: this.store(gates),
        clock: this.clock,
        tools: [...this.tools],
        prompt,
      },
      plugins: [replayPlugin(this.script, gates)],
      ...(this.loop ? { loaded: new Map([[this.loop.identity.use, this.loop.plugin]]) } : {}),
      answerer: replayAnswerer(this.script, gates),
      // A budget question is answered from the log, whoever answered it live (ADR 0047).
      askOnBudget: true,
      sleep: async () => {},
      preStep: replayPreStep(this.script, gates),
      existing,
      opened: k === 0 ? 'fresh' : 'logged',
      ...(startGate ? { startGate } : {}),
      depth: start.depth,
      parent: start.parent,
      ...(snapshot ? { snapshot } : {}),
    });
    session.subscribe((e) => void (e.type === 'entry.appended' && this.guard(() => this.copyForeign())));
    session.start();
    this.live = { session, gates, seg, ...(release ? { release } : {}) };
    return this.live;
  }

  /** The foreign entries standing at `i`, as drafts. */
  private foreignAt(i: number): Draft[] {
    const out: Draft[] = [];
    for (; isForeign(this.original[i]); i++) {
      const { seq: _seq, at: _at, ...draft } = this.original[i]!;
      out.push(draft as Draft);
    }
    return out;
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
    const next = this.original[this.out.length];
    if (isForeign(next)) return this.copyForeign(), true;
    if (live.release) {
      live.release();
      delete live.release;
      return true;
    }
    if (isInput(next)) return this.deliver(live);
    const named = live.gates.leadingTo(next);
    if (named) return named.open(), true;
    const silent = live.gates.oldestSilent();
    if (silent) return silent.open(), true;
    return false;
  }

  /**
   * What reached the session from outside, sent again where the log holds it: the session logs it as it did live.
   * Inputs that stand together arrived together (nothing the machines wrote came between): they go in the same tick.
   */
  private deliver(live: Live): boolean {
    const s = live.session;
    for (let next = this.original[this.out.length]; isInput(next) && !this.sealed; next = this.original[this.out.length]) {
      const before = this.out.length;
      if (next.kind === 'session/input') void s.send(next.text, next.mode, next.origin).catch(() => undefined);
      else if (next.kind === 'session/cancel') void s.cancel(next.by);
      else if (next.kind === 'session/compact') void s.compact(next.by);
      else void s.end(next.by, { keepOpen: true }).catch(() => undefined);
      if (this.out.length === before && !this.difference) {
        // The live session logged it at this point; this one did not (nothing ran to cancel, or it was closed).
        this.difference = { index: before, note: `replay stopped: the session did not take the log's ${next.kind} here` };
        this.sealed = true;
      }
    }
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

  /** A repair's entries, appended as `log/repair.ts` planned them (a recorder of their own, the log's clock). */
  private appendClosing(drafts: readonly Draft[]): void {
    this.sealed = false;
    this.limit = this.out.length + drafts.length;
    const recorder = new Recorder({ location: 'replay:', append: (e, line) => this.accept(e, line), flush: async () => {}, close: async () => {} }, this.clock, this.out.slice());
    for (const d of drafts) if (!this.difference) recorder.append(d);
  }
}
