/**
 * A bridle turn's end as ACP's `session/prompt` answer. ACP has stop reasons
 * for a turn that ended on purpose; a turn that failed (the model
 * unreachable, a log that could not be saved) is not one of them, so it is a
 * JSON-RPC error naming bridle's code instead.
 */
import type { StopReason } from '@agentclientprotocol/sdk';
import type { Entry } from '../../log/entries.js';
import type { TurnOutput } from '../../machines/turn.machine.js';

export type PromptEnd = { stopReason: StopReason } | { failed: { code: string; cause: string } };

/** The turn's last answer declined (OpenAI's refusal, a content filter). */
function refused(turn: string, entries: readonly Entry[]): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'turn/start' && e.turn === turn) return false;
    if (e.kind === 'assistant/message' && e.turn === turn) return e.finish.kind === 'ok' && (e.finish.reason === 'refusal' || e.finish.reason === 'content-filter');
  }
  return false;
}

/**
 * Contract: pure. completed → `end_turn` (`refusal` when the model declined);
 * aborted, interrupted → `cancelled`; max-tokens → `max_tokens`; max-steps →
 * `max_turn_requests`; blocked (a pre-step listener rejected the input) →
 * `refusal`; error → failed, with its code.
 */
export function promptEnd(out: TurnOutput, entries: readonly Entry[]): PromptEnd {
  switch (out.reason) {
    case 'completed':
      return { stopReason: refused(out.turn, entries) ? 'refusal' : 'end_turn' };
    case 'aborted':
    case 'interrupted':
      return { stopReason: 'cancelled' };
    case 'max-tokens':
      return { stopReason: 'max_tokens' };
    case 'max-steps':
      return { stopReason: 'max_turn_requests' };
    case 'blocked':
      return { stopReason: 'refusal' };
    case 'error':
      return { failed: { code: out.code ?? 'UNKNOWN', cause: out.cause ?? '' } };
  }
}
