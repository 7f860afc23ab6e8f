/**
 * One bridle session as the ACP agent hosts it: the session, and its feed of
 * `session/update`s. The feed watches the session through one channel, the
 * session's feed (its entries, with the model's live chunks for text as it
 * streams), mapped by `updates.ts`; nothing reads the machines. After each
 * step's usage it also says what the session's tree has cost (`usage_update`).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Chunk } from '../../log/chunks.js';
import type { Entry } from '../../log/entries.js';
import { TOOLS } from '../../ports/index.js';
import type { BridleSession } from '../../runtime/bridle-session.js';
import { chunkUpdate, currentPlan, entryUpdates, progressUpdate, usageUpdate, type FeedState } from './updates.js';
import type { UsageOf } from '../usage.js';
import type { AcpConfig } from './config-options.js';

export class AcpHostedSession {
  private session_?: BridleSession;
  private unsubscribe?: () => void;
  private readonly streamed = new Set<string>();
  private readonly state: FeedState;
  /** A `session/prompt` is running. */
  prompting = false;
  /** What the client set (`session/set_config_option`): the session is opened again with it. */
  config: AcpConfig = {};
  /** Set while the session is opened again with a new config; a prompt waits for it. */
  reopening?: Promise<void>;
  /** The `usage_update`s in flight, in order: each waits for the one before. */
  private usageSent_: Promise<void> = Promise.resolve();

  constructor(
    readonly cwd: string,
    private readonly send: (sessionId: string, update: SessionUpdate) => void,
    private readonly usageOf?: UsageOf,
  ) {
    this.state = { cwd, tools: { get: () => undefined }, calls: new Map() };
  }

  get session(): BridleSession {
    if (!this.session_) throw new Error('the ACP session is not open yet');
    return this.session_;
  }

  get id(): string {
    return this.session_?.id ?? '';
  }

  /** The tool lookup of the feed's state, for a permission question's call. */
  get feed(): FeedState {
    return this.state;
  }

  /** Binds the opened session (not started yet); from now on its tools title the calls. */
  attach(session: BridleSession): void {
    this.session_ = session;
    const tools = session.host.get(TOOLS);
    this.state.tools = { get: (name) => tools.get(name) };
  }

  /** Stops watching the session (closed, to be opened again): `attach` and `goLive` bind the next one. */
  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Streams what the log holds so far as history (`session/load`), then goes live. */
  replayHistory(): void {
    this.state.calls.clear();
    for (const e of this.session.recorder.entries) for (const u of entryUpdates(e, this.state, { kind: 'history' })) this.send(this.id, u);
    if (this.session.recorder.entries.some((e) => e.kind === 'assistant/message' && e.usage)) this.sendUsage();
    this.goLive();
  }

  /**
   * Goes live without the history (`session/resume`: the client keeps its own), first sending what a client
   * shows beside it: the plan now, when the log holds one, and the meter (`usage_update`), when a step had usage.
   */
  sendState(): void {
    const plan = currentPlan(this.session.recorder.entries, this.state.tools);
    if (plan) this.send(this.id, plan);
    if (this.session.recorder.entries.some((e) => e.kind === 'assistant/message' && e.usage)) this.sendUsage();
    this.goLive();
  }

  /** Subscribes to the session's feed (before it starts): its entries and live text become updates. Idempotent. */
  goLive(): void {
    this.unsubscribe ??= this.session.subscribe((ev) => {
      if (ev.type === 'entry.appended') this.entry(ev.entry);
      else if (ev.type === 'chunk.streamed') this.chunk(ev.chunk, ev.step);
      else if (ev.type === 'tool.progress') this.send(this.id, progressUpdate(ev));
    });
  }

  /** Contract: never rejects; resolves once every `usage_update` queued so far has been sent (or given up). */
  usageSent(): Promise<void> {
    return this.usageSent_;
  }

  private entry(e: Entry): void {
    for (const u of entryUpdates(e, this.state, { kind: 'live', streamed: this.streamed })) this.send(this.id, u);
    // After each step's usage, and when a subagent ends (its steps are the tree's): what the tree has cost so far.
    if ((e.kind === 'assistant/message' && e.usage) || e.kind === 'subagent/end') this.sendUsage();
  }

  private sendUsage(): void {
    const usageOf = this.usageOf;
    const session = this.session_;
    if (!usageOf || !session) return;
    const entries = session.recorder.entries.slice();
    this.usageSent_ = this.usageSent_.then(async () => {
      try {
        const report = await usageOf(session.id, entries);
        if (report) this.send(session.id, usageUpdate(entries, report, session.meter.window));
      } catch {
        // A child log that cannot be read costs the client a figure, never the session.
      }
    });
  }

  private chunk(chunk: Chunk, step: string): void {
    const u = chunkUpdate(chunk);
    if (!u) return;
    this.streamed.add(step);
    this.send(this.id, u);
  }
}
