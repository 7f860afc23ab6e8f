/** Pure builders of the compaction machine's drafts. */
import type { DraftOf } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';

export type CompactionTrigger = DraftOf<'compaction/start'>['trigger'];
export type CompactionOutcome = DraftOf<'compaction/end'>['outcome'];

/** What a measurement says about the next request. */
export interface ContextMeasure {
  /** Provider-reported usage carried forward when there is one, else the estimate. */
  tokens: number;
  source: 'reported' | 'estimate';
  window: number;
  /** threshold × window: at or above it, compaction is due. */
  limit: number;
}

/** The pressure guard's rule: compaction is due at or over the limit. */
export const isPressing = (m: ContextMeasure): boolean => m.tokens >= m.limit;

/** A summary to request: the span it replaces, the turn it is logged under, the request itself. */
export interface SummaryRequestPlan {
  start: number;
  end: number;
  turn: string;
  request: ModelRequest;
  /** Estimated tokens of what the summary replaces; a summary that is not shorter is not logged. */
  replacing?: number;
}

export const draftCompactionStart = (trigger: CompactionTrigger, turn: string | undefined, m: ContextMeasure): DraftOf<'compaction/start'> => {
  const d: DraftOf<'compaction/start'> = { kind: 'compaction/start', trigger, estimatedTokens: m.tokens, window: m.window };
  if (turn !== undefined) d.turn = turn;
  return d;
};

export const draftCompactionSummary = (p: SummaryRequestPlan, text: string): DraftOf<'compaction/summary'> => ({
  kind: 'compaction/summary',
  start: p.start,
  end: p.end,
  text,
});

/** The model-visible replacement: an ordinary user message, origin `summary`, citing every entry it shadows. */
export const draftSummaryMessage = (p: SummaryRequestPlan, text: string): DraftOf<'user/message'> => ({
  kind: 'user/message',
  turn: p.turn,
  text,
  origin: 'summary',
  surfaceOp: { op: 'replace', start: p.start, end: p.end },
});

export const draftCompactionEnd = (outcome: CompactionOutcome, tokensBefore: number, tokensAfter: number): DraftOf<'compaction/end'> => ({
  kind: 'compaction/end',
  outcome,
  tokensBefore,
  tokensAfter,
});
