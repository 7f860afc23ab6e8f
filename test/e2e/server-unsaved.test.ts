/**
 * The server when a session's log cannot be saved (ADR 0017): the turn ends
 * `error` LOG_NOT_DURABLE, attached clients are told with `session/unsaved`
 * (its entries past `durableSeq` are never sent as `session/entry`), and the
 * server — that session included — goes on.
 */
import { expect, it } from 'vitest';
import { createMemoryStore } from '../../adapters/store/memory.js';
import { NotificationParams } from '../../server/protocol.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const serving = serverPerTest();

it('a turn whose end cannot be saved: clients get session/unsaved naming LOG_NOT_DURABLE and the error; the server and the session go on', async () => {
  // The first session's store breaks at its first turn/end and stays broken, as a JSONL file whose sync failed does.
  let opened = 0;
  const store = () => {
    const inner = createMemoryStore();
    if (++opened > 1) return inner;
    let broken = false;
    return {
      ...inner,
      flush: async () => {
        broken ||= inner.lines.some((l) => l.includes('"kind":"turn/end"'));
        if (broken) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      },
    };
  };
  const t = await serving.start(() => ({ text: 'hi' }), { store });
  const c = await serving.connect();
  const { sessionId } = (await c.call('session/create', {})) as { sessionId: string };
  await c.call('session/attach', { sessionId });
  expect(await c.call('session/input', { sessionId, text: 'first' })).toMatchObject({ accepted: true });
  const note = await c.waitFor((m) => m.method === 'session/unsaved', 10_000, 'session/unsaved');
  NotificationParams['session/unsaved'].parse(note.params);
  expect(note.params).toMatchObject({ sessionId, turn: 't1', code: 'LOG_NOT_DURABLE', message: expect.stringContaining('EIO') });
  const p = note.params as { durableSeq: number; lastSeq: number };
  expect(p.durableSeq).toBeLessThan(p.lastSeq);
  // The unsaved turn/end was never sent as an entry.
  expect(c.entries(sessionId).some((e: { kind: string }) => e.kind === 'turn/end')).toBe(false);

  // The session stays up. The next input cannot be saved either: it is not acknowledged (-32007, ADR 0021), and the
  // turn it started says again that the session could not save it.
  const second = await c.request('session/input', { sessionId, text: 'second' });
  expect(second.error).toMatchObject({ code: -32007, message: expect.stringContaining('EIO'), data: { reason: 'SESSION_NOT_SAVED' } });
  await c.waitFor((m) => m.method === 'session/unsaved' && m.params.turn === 't2', 10_000, 'session/unsaved for t2');
  expect(c.notifications('session/unsaved').map((n: { turn: string }) => n.turn)).toEqual(['t1', 't2']);
  // And so does the server: another session runs and is saved as usual.
  const other = (await c.call('session/create', {})) as { sessionId: string };
  await c.call('session/attach', { sessionId: other.sessionId });
  await c.call('session/input', { sessionId: other.sessionId, text: 'hello' });
  await c.waitFor((m) => m.method === 'session/entry' && m.params.sessionId === other.sessionId && m.params.entry.kind === 'turn/end', 10_000, 'the other session\'s turn/end');
});
