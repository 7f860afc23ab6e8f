/**
 * The token meter: how big the next request is. Where the provider reported
 * usage for an earlier request, that count is carried forward by the
 * estimated growth since; otherwise the figure is the estimate (code points
 * / 4) and says so. The message part is kept incrementally from the log, so
 * a measurement costs the same at step 10 and at step 10,000.
 */
import { isVisible } from '../../log/visible.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { headerChars, messageChars, tokensOfChars } from '../../log/context/tokens.js';
import type { Recorder } from '../../log/recorder.js';
import type { ContextMeasure } from '../../machines/compaction-drafts.js';
import { FALLBACK_CONTEXT_WINDOW } from './windows.js';
import type { HeaderParts } from '../prepare-request.js';
import { ModelCode } from '../../log/entry-values.js';

export interface ContextMeterOptions {
  /** The model's window in tokens; undefined when unknown (then proactive compaction waits for an overflow to learn it). */
  window?: number;
  /** Compaction is due at threshold × window. */
  threshold: number;
}

/** What a visible entry adds to the messages: its one message, measured without a projection built for it (#26). */

export class ContextMeter {
  /** Σ messageChars over the projection's messages. */
  private chars = 0;
  private headerCharsLogged = 0;
  private calibration?: { reported: number; chars: number };
  private inferredWindow?: number;
  private cachedHeader?: { h: HeaderParts; chars: number };
  /** The newest logged request header: what the previous request was sent with. */
  lastHeader?: EntryOf<'request/header'>;

  constructor(
    private readonly recorder: Recorder,
    private readonly header: () => HeaderParts,
    private readonly o: ContextMeterOptions,
  ) {
    for (const e of recorder.entries) if (e.kind === 'request/header') this.lastHeader = e;
    if (this.lastHeader) this.headerCharsLogged = headerChars(this.lastHeader);
    this.recount();
    recorder.onEntry((e) => this.observe(e));
  }

  /** The window compaction plans with: configured or learned from an overflow (the smaller wins), else a fallback. */
  get window(): number {
    if (this.o.window === undefined) return this.inferredWindow ?? FALLBACK_CONTEXT_WINDOW;
    return Math.min(this.o.window, this.inferredWindow ?? Infinity);
  }

  /** Whether the pressure guard can fire: only with a configured or learned window. */
  get knowsWindow(): boolean {
    return this.o.window !== undefined || this.inferredWindow !== undefined;
  }

  /** Contract: synchronous, O(1) in the length of the session (after a compaction, O(visible) once). */
  measure(): ContextMeasure {
    const h = this.header();
    if (this.cachedHeader?.h !== h) this.cachedHeader = { h, chars: headerChars(h) };
    const chars = this.cachedHeader.chars + this.chars;
    const c = this.calibration;
    const tokens = c ? Math.max(0, c.reported + Math.round((chars - c.chars) / 4)) : tokensOfChars(chars);
    const window = this.window;
    return { tokens, source: c ? 'reported' : 'estimate', window, limit: this.knowsWindow ? Math.floor(window * this.o.threshold) : Number.MAX_SAFE_INTEGER };
  }

  private recount(): void {
    this.chars = this.recorder.projection.messages.reduce((n, m) => n + messageChars(m), 0);
  }

  private observe(e: Entry): void {
    if (e.kind === 'request/header') {
      this.lastHeader = e;
      this.headerCharsLogged = headerChars(e);
      return;
    }
    if (!isVisible(e)) return;
    if (e.surfaceOp !== 'append') {
      this.recount();
      return;
    }
    if (e.kind === 'assistant/message') {
      // At this entry the message sum is still that of the request it answers (I1).
      const requestChars = this.chars + this.headerCharsLogged;
      if (e.usage) this.calibration = { reported: e.usage.inputTokens, chars: requestChars };
      // The provider says the request did not fit: the window is smaller than it, whatever was configured.
      if (e.finish.kind === 'error' && e.finish.code === ModelCode.CONTEXT_WINDOW_EXCEEDED) {
        const sent = this.calibration ? this.calibration.reported + Math.round((requestChars - this.calibration.chars) / 4) : tokensOfChars(requestChars);
        this.inferredWindow = Math.max(1024, Math.min(this.inferredWindow ?? Infinity, Math.floor(sent * 0.9)));
      }
    }
    // The message the projection built for `e` a moment ago (the recorder applies an entry before its listeners hear it).
    const m = this.recorder.projection.placedMessageOf(e);
    this.chars += m ? messageChars(m) : 0;
  }
}
