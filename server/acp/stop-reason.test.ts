import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import type { TurnOutput } from '../../machines/turn.machine.js';
import { promptEnd } from './stop-reason.js';

const out = (reason: TurnOutput['reason'], extra: Partial<TurnOutput> = {}): TurnOutput => ({ turn: 't2', reason, steps: 1, leftoverSteer: [], leftoverInject: [], ...extra });
const env = { seq: 1, at: '2026-01-01T00:00:00.000Z' } as const;
const answer = (turn: string, reason: 'stop' | 'refusal' | 'content-filter'): Entry => ({ ...env, kind: 'assistant/message', turn, step: `${turn}.s1`, blocks: [{ type: 'text', text: 'x' }], finish: { kind: 'ok', reason }, surfaceOp: 'append' });
const start = (turn: string): Entry => ({ ...env, kind: 'turn/start', turn, input: 'x' });

describe('a turn end as an ACP stop reason', () => {
  it('maps every end reason', () => {
    expect(promptEnd(out('completed'), [])).toEqual({ stopReason: 'end_turn' });
    expect(promptEnd(out('aborted'), [])).toEqual({ stopReason: 'cancelled' });
    expect(promptEnd(out('interrupted'), [])).toEqual({ stopReason: 'cancelled' });
    expect(promptEnd(out('max-tokens'), [])).toEqual({ stopReason: 'max_tokens' });
    expect(promptEnd(out('max-steps'), [])).toEqual({ stopReason: 'max_turn_requests' });
    expect(promptEnd(out('blocked'), [])).toEqual({ stopReason: 'refusal' });
    expect(promptEnd(out('error', { code: 'AUTH', cause: 'bad key' }), [])).toEqual({ failed: { code: 'AUTH', cause: 'bad key' } });
  });

  it('a completed turn whose last answer refused (or was filtered) is a refusal; an earlier turn\'s refusal is not this one\'s', () => {
    expect(promptEnd(out('completed'), [start('t2'), answer('t2', 'refusal')])).toEqual({ stopReason: 'refusal' });
    expect(promptEnd(out('completed'), [start('t2'), answer('t2', 'content-filter')])).toEqual({ stopReason: 'refusal' });
    expect(promptEnd(out('completed'), [start('t2'), answer('t2', 'refusal'), answer('t2', 'stop')])).toEqual({ stopReason: 'end_turn' });
    expect(promptEnd(out('completed'), [start('t1'), answer('t1', 'refusal'), start('t2')])).toEqual({ stopReason: 'end_turn' });
  });
});
