/**
 * Stage 1 of compaction, model-free: oversized tool results are replaced by
 * their head and tail with a note of what was cut. The replacement is an
 * ordinary logged `tool/result` citing the original's seq, with the same
 * call ids, so the call stays paired; the original stays in the log.
 */
import { coverOf } from '../visible.js';
import type { DraftOf } from '../entries.js';
import { codePoints, CHARS_PER_TOKEN, tokensOfChars } from './tokens.js';
import { truncateMiddle } from './truncate.js';
import type { Unit } from './units.js';

export interface PruneLimits {
  /** Results above this many (estimated) tokens are cut down to about this size. */
  capTokens: number;
  /** The same for the newest unit, whose results the model has not read yet. */
  newestCapTokens: number;
}

/** Default limits for a context window: 5% of it per older result, 25% for the newest. */
export const pruneLimitsFor = (window: number): PruneLimits => ({
  capTokens: Math.max(256, Math.floor(window * 0.05)),
  newestCapTokens: Math.max(1024, Math.floor(window * 0.25)),
});

/** Room left for the note, so a pruned result fits its cap. */
const NOTE_ROOM = 200;

export const pruneNote = (cut: { codePoints: number; lines: number }): string =>
  `\n[… bridle cut ${cut.codePoints} characters${cut.lines > 0 ? ` (${cut.lines} lines)` : ''} from the middle of this tool result to save context; the full result stays in the session log …]\n`;

/** Contract: pure; one replacement draft per oversized result, in log order; none for results already within their cap. */
export function planPrune(units: readonly Unit[], limits: PruneLimits): DraftOf<'tool/result'>[] {
  const out: DraftOf<'tool/result'>[] = [];
  units.forEach((u, k) => {
    const cap = k === units.length - 1 ? limits.newestCapTokens : limits.capTokens;
    for (const e of u.items) {
      // A replacement is never pruned again: pruning is idempotent.
      if (e.kind !== 'tool/result' || e.surfaceOp !== 'append' || tokensOfChars(codePoints(e.content)) <= cap) continue;
      const budget = Math.max(0, cap * CHARS_PER_TOKEN - NOTE_ROOM);
      const cut = truncateMiddle(e.content, Math.floor(budget * 0.65), Math.floor(budget * 0.35), pruneNote);
      if (cut.cutCodePoints === 0) continue;
      const { start, end } = coverOf(e);
      const d: DraftOf<'tool/result'> = {
        kind: 'tool/result',
        turn: e.turn,
        step: e.step,
        callId: e.callId,
        toolCallId: e.toolCallId,
        name: e.name,
        status: e.status,
        content: cut.text,
        surfaceOp: { op: 'replace', start, end },
      };
      if (e.code !== undefined) d.code = e.code;
      if (e.verdict !== undefined) d.verdict = e.verdict;
      out.push(d);
    }
  });
  return out;
}
