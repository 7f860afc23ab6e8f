/**
 * A hosted session that asks before it is open: a session going on with its
 * log (a restart, a take-over) may ask a pending approval while `open` has not
 * returned it yet. The desk waits for it, then asks its clients as ever.
 */
import { afterEach, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { HostedSession } from './hosted-session.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

it('a question asked while the session is being opened is held until it is open, then answered by a client', async () => {
  let asked: Promise<unknown> | undefined;
  const hosted = await HostedSession.open(
    async (_params, hooks) => {
      h = createHarness(() => ({ text: 'ok' }), { answerer: hooks.answerer });
      const signal = new AbortController().signal;
      asked = hooks.answerer({ callId: 't1.s1.c1', name: 'bash', arguments: '{"command":"ls"}', reason: 'runs commands', presented: 'bash: ls', always: { tool: 'bash', pattern: '^ls$' }, signal });
      await new Promise((r) => setTimeout(r, 10));
      return h.session;
    },
    {},
    (m) => {
      throw new Error(m);
    },
  );
  // The desk holds the question once the session is open.
  for (let i = 0; i < 50 && !hosted.desk.respond('t1.s1.c1', 'allowed-once', 'ws:client-1'); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await asked).toEqual({ outcome: 'allowed-once', by: 'ws:client-1' });
});
