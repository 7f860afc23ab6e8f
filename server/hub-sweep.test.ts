/**
 * `Hub.sweep` (ADR 0034): the lease sweep's ask for one session never
 * relays and never rejects. A claim another worker won is let go quietly
 * (no relay, nothing said); a session that cannot be opened here is said to
 * the server's log once; at `maxSessions` nothing is opened.
 */
import { expect, it } from 'vitest';
import { Hub } from './hub.js';
import { ErrorCode, refusal } from './protocol.js';

const noOpen = async () => {
  throw new Error('no session/create in these tests');
};

function hubWith(reopen: () => Promise<never>, maxSessions = 8) {
  const problems: string[] = [];
  const relays: string[] = [];
  const hub = new Hub(noOpen, (m) => problems.push(m), undefined, {
    maxSessions,
    reopen,
    relay: async (id) => {
      relays.push(id);
      return undefined;
    },
  });
  return { hub, problems, relays };
}

it('a sweep that loses the claim to another worker lets go quietly: no relay, nothing said', async () => {
  const { hub, problems, relays } = hubWith(async () => {
    throw refusal(ErrorCode.CreateFailed, 'SESSION_LOCKED', 'held by pid 7 on b: its lease (epoch 3) has not expired');
  });
  expect(await hub.sweep('s-1')).toBe('lost');
  expect(relays).toEqual([]);
  expect(problems).toEqual([]);
  expect(hub.list()).toEqual([]);
  expect(hub.held).toBe(0);
  // A client asking for it is relayed, as ever.
  await expect(hub.find('s-1')).rejects.toMatchObject({ data: { reason: 'SESSION_LOCKED' } });
  expect(relays).toEqual(['s-1']);
});

it('a sweep of a session that cannot be opened here says why once and rejects nothing', async () => {
  const { hub, problems } = hubWith(async () => {
    throw refusal(ErrorCode.CreateFailed, 'SESSION_NOT_RESUMABLE', 'session s-2 cannot be resumed here: it is a Ralph run');
  });
  expect(await hub.sweep('s-2')).toBe('refused');
  expect(problems).toEqual([expect.stringContaining('sweep: session s-2 not taken over: session s-2 cannot be resumed here')]);
});

it('a sweep whose opening failed otherwise (the store out of reach) says so and is tried again later', async () => {
  const { hub, problems } = hubWith(async () => {
    throw new Error('connect ECONNREFUSED');
  });
  expect(await hub.sweep('s-5')).toBe('failed');
  expect(problems.some((m) => m.includes('ECONNREFUSED'))).toBe(true);
});

it('a sweep at the session limit opens nothing', async () => {
  const asked: string[] = [];
  let release = () => undefined as void;
  const { hub } = hubWith(async () => {
    asked.push('one');
    await new Promise<void>((r) => (release = r));
    throw refusal(ErrorCode.CreateFailed, 'SESSION_LOCKED', 'taken meanwhile');
  }, 1);
  const first = hub.sweep('s-3');
  // The first opening holds the one place; the same session again is being opened here already.
  expect(await hub.sweep('s-4')).toBe('full');
  expect(await hub.sweep('s-3')).toBe('here');
  release();
  expect(await first).toBe('lost');
  expect(asked).toEqual(['one']);
});
