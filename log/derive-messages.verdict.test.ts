/** The `verdict` field: rendered so the model can tell, and invisible when absent or `confirmed`. */
import { describe, expect, it } from 'vitest';
import { deriveMessages, Projection } from './derive-messages.js';
import { Entry } from './entries.js';
import type { Verdict } from './entry-values.js';
import { planRepair } from './repair.js';
import { draftResult } from '../machines/drafts.js';

const at = '2026-01-01T00:00:00.000Z';

function log(verdicts: { user?: Verdict; tool?: Verdict }): Entry[] {
  const raw = [
    { seq: 1, at, kind: 'user/message', turn: 't1', text: 'hi', origin: 'user', surfaceOp: 'append', ...(verdicts.user ? { verdict: verdicts.user } : {}) },
    {
      seq: 2,
      at,
      kind: 'assistant/message',
      turn: 't1',
      step: 't1.s1',
      blocks: [{ type: 'tool-call', id: 'a', name: 'bash', arguments: '{"command":"make"}' }],
      finish: { kind: 'ok', reason: 'tool-calls' },
      surfaceOp: 'append',
    },
    { seq: 3, at, kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'bash', status: 'ok', content: 'built', surfaceOp: 'append', ...(verdicts.tool ? { verdict: verdicts.tool } : {}) },
  ];
  // Through the schema, so the field is proven part of the contract.
  return raw.map((x) => Entry.parse(x));
}

const contents = (entries: Entry[]) => deriveMessages(entries).map((m) => ('content' in m ? m.content : null));

describe('verdict in the projection', () => {
  it('absent and confirmed project identically to a log that never had the field', () => {
    expect(contents(log({ user: 'confirmed', tool: 'confirmed' }))).toEqual(contents(log({})));
    expect(contents(log({}))).toEqual(['hi', null, 'built']);
  });

  it('uncertain and rejected are a line before the content, on user messages and tool results alike', () => {
    expect(contents(log({ user: 'uncertain', tool: 'rejected' }))).toEqual(['[verdict: uncertain]\nhi', null, '[verdict: rejected]\nbuilt']);
  });

  it('comes before the origin header of a harness note', () => {
    const note = Entry.parse({ seq: 1, at, kind: 'user/message', turn: 't1', text: 'resumed', origin: 'resume', verdict: 'uncertain', surfaceOp: 'append' });
    expect(contents([note])).toEqual(['[verdict: uncertain]\n[Harness note]\nresumed']);
  });

  it('the incremental projection agrees with the pure fold', () => {
    const entries = log({ user: 'uncertain', tool: 'uncertain' });
    const p = new Projection();
    for (const e of entries) p.apply(e);
    expect(p.messages).toEqual(deriveMessages(entries));
  });

  it('an unknown verdict is refused by the schema', () => {
    expect(() => Entry.parse({ seq: 1, at, kind: 'user/message', turn: 't1', text: 'x', origin: 'user', verdict: 'maybe', surfaceOp: 'append' })).toThrow();
  });
});

describe('where bridle sets a verdict', () => {
  it('crash repair marks an outcome-unknown result uncertain, and a never-started one not at all', () => {
    const entries = [
      { seq: 1, at, kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 },
      { seq: 2, at, kind: 'turn/start', turn: 't1', input: 'go' },
      { seq: 3, at, kind: 'user/message', turn: 't1', text: 'go', origin: 'user', surfaceOp: 'append' },
      { seq: 4, at, kind: 'step/start', turn: 't1', step: 't1.s1' },
      {
        seq: 5,
        at,
        kind: 'assistant/message',
        turn: 't1',
        step: 't1.s1',
        blocks: [
          { type: 'tool-call', id: 'a', name: 'bash', arguments: '{}' },
          { type: 'tool-call', id: 'b', name: 'bash', arguments: '{}' },
        ],
        finish: { kind: 'ok', reason: 'tool-calls' },
        surfaceOp: 'append',
      },
      { seq: 6, at, kind: 'tool/call', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'bash', arguments: '{}' },
      { seq: 7, at, kind: 'tool/call', turn: 't1', step: 't1.s1', callId: 't1.s1.c2', toolCallId: 'b', name: 'bash', arguments: '{}' },
      { seq: 8, at, kind: 'tool/dispatch', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', idempotent: false },
    ].map((x) => Entry.parse(x));
    const plan = planRepair(entries);
    if (!plan.ok) throw new Error('repair refused');
    const results = plan.drafts.filter((d) => d.kind === 'tool/result');
    expect(results.map((r) => [r.code, r.verdict])).toEqual([
      ['TOOL_OUTCOME_UNKNOWN', 'uncertain'],
      ['TOOL_NOT_STARTED', undefined],
    ]);
  });

  it('a result a post-execute hook blocked is rejected; other errors carry no verdict', () => {
    const c = { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'bash' };
    expect(draftResult(c, 'error', 'Blocked after it ran: no. Its output is withheld.', 'BLOCKED').verdict).toBe('rejected');
    expect(draftResult(c, 'error', 'exit 1', 'EXIT_NONZERO').verdict).toBeUndefined();
    expect(draftResult(c, 'ok', 'fine').verdict).toBeUndefined();
  });
});
