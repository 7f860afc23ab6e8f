/**
 * Acting on a session needs attaching to it (issue 20, item 2): a client that holds the token but never
 * attached to a session may list it, and attach to it, and nothing else. Every method of the protocol that
 * names a session is tried, so a method added later is covered too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { ErrorCode, METHODS, MethodParams, type Method } from '../../server/protocol.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const srv = serverPerTest();
const connect = () => srv.connect();

/** Valid params of each method that names a session, for `sessionId`. */
const paramsFor: Partial<Record<Method, (sessionId: string) => Record<string, unknown>>> = {
  'session/input': (sessionId) => ({ sessionId, text: 'from a stranger' }),
  'session/cancel': (sessionId) => ({ sessionId }),
  'session/compact': (sessionId) => ({ sessionId }),
  'session/snapshot': (sessionId) => ({ sessionId }),
  'session/cost': (sessionId) => ({ sessionId }),
  'session/close': (sessionId) => ({ sessionId }),
  'session/fork': (sessionId) => ({ sessionId }),
  'approval/respond': (sessionId) => ({ sessionId, callId: 't1.s1.c1', outcome: 'allowed-once' }),
};
/** The methods that name a session without acting on it. */
const NOT_ACTING: readonly Method[] = ['session/attach'];

describe('a client not attached to a session cannot act on it', () => {
  it('every method that names a session but session/attach is in the table of acting methods', () => {
    const naming = METHODS.filter((m) => 'sessionId' in MethodParams[m].shape);
    expect(naming.filter((m) => !NOT_ACTING.includes(m)).sort()).toEqual(Object.keys(paramsFor).sort());
    for (const m of Object.keys(paramsFor) as Method[]) expect(MethodParams[m].safeParse(paramsFor[m]!('s1')).success, m).toBe(true);
  });

  it('input, cancel, compact, snapshot, close, fork and approval/respond from an unattached client are refused NOT_ATTACHED; the owner sees nothing happen', async () => {
    const sessions = createMemorySessionStore();
    const t = await srv.start(() => ({ text: 'Writing.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'x' } }] }), { sessions, approval: 'ask' });
    const owner = await connect();
    const { sessionId } = await owner.call('session/create', {});
    await owner.call('session/attach', { sessionId });
    await owner.call('session/input', { sessionId, text: 'write out.txt' });
    const asked = await owner.waitFor((m) => m.method === 'approval/request');
    const before = sessions.get(sessionId)!.lines.slice();

    const stranger = await connect();
    // Listing is not acting: the stranger may see the session exists (and may attach to it).
    expect((await stranger.call('session/list', {})).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionId]);
    for (const [method, params] of Object.entries(paramsFor) as [Method, (id: string) => Record<string, unknown>][]) {
      const p = method === 'approval/respond' ? { ...params(sessionId), callId: asked.params.callId } : params(sessionId);
      const r = await stranger.request(method, p);
      expect(r.error, method).toMatchObject({ code: ErrorCode.NotAttached, data: { reason: 'NOT_ATTACHED' } });
      expect(r.error!.message, method).toContain(`attach to session "${sessionId}" (session/attach) before`);
    }
    // Nothing of it reached the session: no input, no cancel, no fork, no answer; the question is still open and the session hosted.
    expect(sessions.get(sessionId)!.lines).toEqual(before);
    expect(sessions.get('f1')).toBeUndefined();
    expect(fs.existsSync(path.join(t.workspace, 'out.txt'))).toBe(false);
    expect((await owner.call('session/snapshot', { sessionId })).sessionId).toBe(sessionId);

    // Once attached, the same client may act: its answer decides the open question.
    await stranger.call('session/attach', { sessionId });
    expect(await stranger.call('approval/respond', { sessionId, callId: asked.params.callId, outcome: 'rejected' })).toEqual({ accepted: true });
  });

  it('a session the server does not run: an unknown id is UNKNOWN_SESSION, as before', async () => {
    await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    for (const [method, params] of Object.entries(paramsFor) as [Method, (id: string) => Record<string, unknown>][]) {
      expect((await c.request(method, params('nope'))).error, method).toMatchObject({ code: ErrorCode.UnknownSession });
    }
  });
});
