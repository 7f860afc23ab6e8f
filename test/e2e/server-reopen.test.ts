/**
 * The hub's side of serving a store's sessions (issue #11 item 5): a session
 * the server does not host is opened through `reopen` on `session/attach`,
 * once however many clients ask at the same time; an id the store does not
 * have is `UNKNOWN_SESSION`; a refusal reaches the client by its reason.
 * `session/input` opens nothing: it needs attaching first (issue 20, item 2).
 */
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createSession } from '../../runtime/session.js';
import { createScriptedProviderFromFunction } from '../../adapters/model/scripted.js';
import { createMemoryStore } from '../../adapters/store/memory.js';
import { ErrorCode, refusal } from '../../server/protocol.js';
import { steppingClock } from '../helpers/harness.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

it('a session the server does not host is opened on attach, once for a burst of clients; one the store lacks is UNKNOWN_SESSION', async () => {
  const asked: string[] = [];
  t = await startTestServer(() => ({ text: 'hello again' }), {
    reopen: async (id, hooks) => {
      asked.push(id);
      if (id === 'held') throw refusal(ErrorCode.CreateFailed, 'SESSION_LOCKED', 'held elsewhere');
      if (id !== 'old') return undefined;
      await new Promise((r) => setTimeout(r, 50));
      return createSession({
        id,
        cwd: t!.workspace,
        bridleHome: join(dirname(t!.workspace), 'home'),
        settings: { approval: 'auto', sandbox: 'off' },
        services: { model: createScriptedProviderFromFunction(() => ({ text: 'hello again' })), store: createMemoryStore(), clock: steppingClock() },
        ...hooks,
      });
    },
  });
  const url = t.server.url;
  const [a, b] = await Promise.all([RpcClient.connect(url, { token: t.token }), RpcClient.connect(url, { token: t.token })]);
  try {
    const [ra, rb] = await Promise.all([a.call('session/attach', { sessionId: 'old' }), b.call('session/attach', { sessionId: 'old' })]);
    expect(ra).toMatchObject({ sessionId: 'old' });
    expect(rb).toMatchObject({ sessionId: 'old' });
    expect(asked).toEqual(['old']);
    await b.call('session/input', { sessionId: 'old', text: 'hi' });
    await a.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end');
    expect((await a.call('session/list', {})).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(['old']);
    expect((await a.request('session/attach', { sessionId: 'nope' })).error).toMatchObject({ code: ErrorCode.UnknownSession, data: { reason: 'UNKNOWN_SESSION' } });
    expect((await a.request('session/attach', { sessionId: 'held' })).error).toMatchObject({ code: ErrorCode.CreateFailed, data: { reason: 'SESSION_LOCKED' } });
    // Input to a session this client is not attached to opens nothing and reaches nothing.
    expect((await a.request('session/input', { sessionId: 'nope', text: 'x' })).error).toMatchObject({ code: ErrorCode.NotAttached, data: { reason: 'NOT_ATTACHED' } });
    expect((await a.request('session/input', { sessionId: 'held', text: 'x' })).error).toMatchObject({ code: ErrorCode.NotAttached, data: { reason: 'NOT_ATTACHED' } });
    expect(asked.filter((x) => x === 'held')).toHaveLength(1);
    // Closed here, it is opened again on the next attach.
    await a.call('session/close', { sessionId: 'old' });
    await a.call('session/attach', { sessionId: 'old' });
    expect(asked.filter((x) => x === 'old')).toHaveLength(2);
  } finally {
    a.close();
    b.close();
  }
});
