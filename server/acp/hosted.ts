/**
 * One bridle session as the ACP agent hosts it: the session, and its feed of
 * `session/update`s. The feed watches the session through one channel, the
 * recorder's entries (with the model's live chunks for text as it streams),
 * mapped by `updates.ts`; nothing reads the machines.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Chunk } from '../../log/chunks.js';
import { TOOLS } from '../../ports/index.js';
import type { BridleSession } from '../../runtime/session.js';
import { chunkUpdate, entryUpdates, type FeedState } from './updates.js';

export class AcpHostedSession {
  private session_?: BridleSession;
  private unsubscribe?: () => void;
  private readonly streamed = new Set<string>();
  private readonly state: FeedState;
  /** A `session/prompt` is running. */
  prompting = false;

  constructor(
    readonly cwd: string,
    private readonly send: (sessionId: string, update: SessionUpdate) => void,
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

  /** Streams what the log holds so far as history (`session/load`), then goes live. */
  replayHistory(): void {
    this.state.calls.clear();
    for (const e of this.session.recorder.entries) for (const u of entryUpdates(e, this.state, { kind: 'history' })) this.send(this.id, u);
    this.goLive();
  }

  /** Subscribes to the session's feed (before it starts): its entries and live text become updates. Idempotent. */
  goLive(): void {
    this.unsubscribe ??= this.session.subscribe((ev) => {
      if (ev.type === 'entry.appended') for (const u of entryUpdates(ev.entry, this.state, { kind: 'live', streamed: this.streamed })) this.send(this.id, u);
      else if (ev.type === 'chunk.streamed') this.chunk(ev.chunk, ev.step);
    });
  }

  private chunk(chunk: Chunk, step: string): void {
    const u = chunkUpdate(chunk);
    if (!u) return;
    this.streamed.add(step);
    this.send(this.id, u);
  }
}
