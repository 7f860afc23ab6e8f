/** `session/entry` carries a finished call's render intent (ADR 0067), found from the calls seen or the log. */
import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { builtinTools } from '../tools/index.js';
import { callIn, entryNotices } from './entry-notice.js';
import { NotificationParams } from './protocol.js';

const tools = new Map(builtinTools().map((t) => [t.name, t]));
const ids = { seq: 1, at: '2026-01-01T00:00:00.000Z', turn: 't1', step: 't1.s1', toolCallId: 'c', name: 'bash' } as const;
const call = (callId: string): Entry => ({ ...ids, kind: 'tool/call', callId, arguments: '{"command":"ls"}' }) as Entry;
const result = (callId: string): Entry => ({ ...ids, kind: 'tool/result', callId, status: 'ok', content: 'exit code: 0\n--- stdout ---\na', surfaceOp: 'append' }) as Entry;

describe('entryNotices', () => {
  it('a result carries its intent, valid on the wire; other entries none; a call not seen is found in the log', () => {
    const log = [call('t1.s1.c2')];
    const notice = entryNotices('s1', () => tools, (id) => callIn(log, id));
    expect(JSON.parse(notice(call('t1.s1.c1'))).params.intent).toBeUndefined();
    const params = JSON.parse(notice(result('t1.s1.c1'))).params;
    expect(params.intent).toEqual({ kind: 'terminal', command: 'ls', exitCode: 0, output: '--- stdout ---\na', title: 'bash: ls', status: 'ok' });
    expect(NotificationParams['session/entry'].safeParse(params).success).toBe(true);
    expect(JSON.parse(notice(result('t1.s1.c2'))).params.intent).toMatchObject({ kind: 'terminal' });
    expect(JSON.parse(notice(result('t1.s1.c9'))).params.intent).toBeUndefined();
  });
});
