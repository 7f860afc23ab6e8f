/**
 * A session whose actor crashed (its store died, so not even its turn could
 * be closed) is not a zombie: `session/input` gets a JSON-RPC error naming
 * the crash instead of `accepted`, and the server serves everyone else.
 */
import { expect, it } from 'vitest';
import { serverPerTest } from '../helpers/server-per-test.js';

const serving = serverPerTest();

it('session/input to a crashed session answers -32006 (session crashed), not accepted; other sessions still run', async () => {
  const t = await serving.start(() => ({ text: 'hi' }));
  const c = await serving.connect();
  const { sessionId } = (await c.call('session/create', {})) as { sessionId: string };
  await c.call('session/attach', { sessionId });
  const doomed = t.sessions[0]!;
  // The input itself is saved (it is logged first, ADR 0021); everything after it fails.
  const store = doomed.recorder.store as { append: (...a: unknown[]) => unknown };
  const append = store.append.bind(store);
  let appends = 0;
  store.append = (...a: unknown[]) => {
    if (appends++ > 0) throw new Error('EIO: i/o error');
    return append(...a);
  };
  expect(await c.call('session/input', { sessionId, text: 'first' })).toMatchObject({ accepted: true });
  await expect.poll(() => doomed.actor.getSnapshot().status).toBe('error');
  const refused = await c.request('session/input', { sessionId, text: 'are you there?' });
  expect(refused.result).toBeUndefined();
  expect(refused.error).toMatchObject({ code: -32006, message: expect.stringContaining('EIO'), data: { reason: 'SESSION_CRASHED' } });

  const other = (await c.call('session/create', {})) as { sessionId: string };
  await c.call('session/attach', { sessionId: other.sessionId });
  expect(await c.call('session/input', { sessionId: other.sessionId, text: 'hello' })).toMatchObject({ accepted: true });
  await expect.poll(() => t.sessions[1]!.recorder.entries.some((e) => e.kind === 'turn/end')).toBe(true);
});

it('session/input whose entry cannot be saved answers -32007 (not saved), not accepted; the session never saw it and goes on', async () => {
  const t = await serving.start(() => ({ text: 'hi' }));
  const c = await serving.connect();
  const { sessionId } = (await c.call('session/create', {})) as { sessionId: string };
  await c.call('session/attach', { sessionId });
  const s = t.sessions[0]!;
  const store = s.recorder.store as { append: (...a: unknown[]) => unknown };
  const append = store.append.bind(store);
  let refuse = true;
  store.append = (...a: unknown[]) => {
    if (refuse) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return append(...a);
  };
  const refused = await c.request('session/input', { sessionId, text: 'lost?' });
  expect(refused.result).toBeUndefined();
  expect(refused.error).toMatchObject({ code: -32007, message: expect.stringContaining('ENOSPC'), data: { reason: 'SESSION_NOT_SAVED' } });
  expect(s.actor.getSnapshot().value).toBe('idle');
  expect(s.recorder.entries.map((e) => e.kind)).toEqual(['session/start']);
  refuse = false;
  expect(await c.call('session/input', { sessionId, text: 'now' })).toEqual({ accepted: true, seq: 2 });
  await expect.poll(() => s.recorder.entries.some((e) => e.kind === 'turn/end')).toBe(true);
});
