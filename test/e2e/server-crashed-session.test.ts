/**
 * A session whose actor crashed (its store died, so not even its turn could
 * be closed) is not a zombie: `session/input` gets a JSON-RPC error naming
 * the crash instead of `accepted`, and the server serves everyone else.
 */
import { afterEach, expect, it } from 'vitest';
import { RpcClient } from '../helpers/rpc-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let t: TestServer | undefined;
let c: RpcClient | undefined;
afterEach(async () => {
  c?.close();
  await t?.stop();
  t = undefined;
});

it('session/input to a crashed session answers -32006 (session crashed), not accepted; other sessions still run', async () => {
  t = await startTestServer(() => ({ text: 'hi' }));
  c = await RpcClient.connect(t.server.url, { token: t.token });
  const { sessionId } = (await c.call('session/create', {})) as { sessionId: string };
  const doomed = t.sessions[0]!;
  (doomed.recorder.store as { append: unknown }).append = () => {
    throw new Error('EIO: i/o error');
  };
  expect(await c.call('session/input', { sessionId, text: 'first' })).toEqual({ accepted: true });
  await expect.poll(() => doomed.actor.getSnapshot().status).toBe('error');
  const refused = await c.request('session/input', { sessionId, text: 'are you there?' });
  expect(refused.result).toBeUndefined();
  expect(refused.error).toMatchObject({ code: -32006, message: expect.stringContaining('EIO'), data: { reason: 'SESSION_CRASHED' } });

  const other = (await c.call('session/create', {})) as { sessionId: string };
  expect(await c.call('session/input', { sessionId: other.sessionId, text: 'hello' })).toEqual({ accepted: true });
  await expect.poll(() => t!.sessions[1]!.recorder.entries.some((e) => e.kind === 'turn/end')).toBe(true);
});
