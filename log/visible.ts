/**
 * Which entries a model can see, said once: the projection (`derive-messages.ts`), the verifier's surface
 * check (`verify-surface.ts`) and the context meter read these, so they cannot disagree on it.
 */
import type { Entry, EntryOf } from './entries.js';

/** The kinds whose entries can reach a model request. */
export type Visible = EntryOf<'user/message'> | EntryOf<'assistant/message'> | EntryOf<'tool/result'>;

export const isVisible = (e: Entry): e is Visible => e.kind === 'user/message' || e.kind === 'assistant/message' || e.kind === 'tool/result';

/**
 * The seq span an item stands for: its own seq, or for a replacement the span
 * it shadows. A replace shadows every item whose cover lies inside its span,
 * so a later summary can take in an earlier summary or a pruned result (whose
 * own seq is late) without swallowing the entries logged in between.
 */
export const coverOf = (e: Visible): { start: number; end: number } =>
  e.surfaceOp === 'append' ? { start: e.seq, end: e.seq } : { start: e.surfaceOp.start, end: e.surfaceOp.end };
