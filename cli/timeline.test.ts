import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { timelineLine } from './timeline.js';

const at = '2026-01-01T00:00:00.000Z';
const ids = { turn: 't1', step: 't1.s1' };
/** Any character a terminal acts on (a timeline line is one line: no newline either). */
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('the replay timeline', () => {
  it('shows escape sequences, DEL, C1 controls and bidi overrides in logged model text instead of letting the terminal act on them', () => {
    const entries = [
      { seq: 2, at, kind: 'turn/start', turn: 't1', input: 'go\x1b[2K' },
      { seq: 3, at, kind: 'tool/call', ...ids, callId: 't1.s1.c1', toolCallId: 'x', name: 'bash\x1b[8m', arguments: '{"command":"ls\x7f\x9b2J"}' },
      { seq: 4, at, kind: 'approval/asked', ...ids, callId: 't1.s1.c1', name: 'bash\x1b[8m', reason: 'runs\u202ecommands' },
      { seq: 5, at, kind: 'tool/result', ...ids, callId: 't1.s1.c1', toolCallId: 'x', name: 'bash', status: 'ok', content: 'out\x1b]0;pwned\x07', surfaceOp: 'append' },
      { seq: 6, at, kind: 'assistant/message', ...ids, blocks: [{ type: 'text', text: 'done\x9b1A' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' },
      { seq: 7, at, kind: 'turn/end', turn: 't1', reason: 'aborted', steps: 1, cause: 'user\x1b[2K' },
    ] as Entry[];
    const lines = entries.map(timelineLine);
    for (const l of lines) expect(l).not.toMatch(ACTIVE);
    expect(lines[0]).toContain('go\\u001b[2K');
    expect(lines[1]).toContain('bash␛[8m {"command":"ls␡⟨U+009B⟩2J"}');
    expect(lines[2]).toContain('runs⟨U+202E⟩commands');
    expect(lines[3]).toContain('out␛]0;pwned␇');
    expect(lines[4]).toContain('done⟨U+009B⟩1A');
    expect(lines[5]).toContain('(user␛[2K)');
  });
});
