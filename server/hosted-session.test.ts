/**
 * A hosted session that asks as it opens: a session going on with its log (a restart, a take-over) asks its
 * pending approval again as soon as it runs (ADR 0027). `open` hands the server the session not started; the
 * hosted session subscribes, then starts it (ADR 0051), so the desk is asked only once the session is the
 * server's — and a client answers as ever.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import type { Entry } from '../log/entries.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import type { ToolDefinition } from '../ports/tools.js';
import { createSession } from '../runtime/session.js';
import { createHarness, steppingClock, type Harness } from '../test/helpers/harness.js';
import { HostedSession } from './hosted-session.js';

let h: Harness | undefined;
let hosted: HostedSession | undefined;
afterEach(async () => {
  await hosted?.close();
  hosted = undefined;
  h?.cleanup();
  h = undefined;
});
const tick = () => new Promise((r) => setTimeout(r, 1));

const runs: string[] = [];
const mark: ToolDefinition = {
  name: 'mark',
  description: 'appends a mark',
  parameters: z.object({}),
  readOnly: false,
  idempotent: false,
  execute: async () => (runs.push('mark'), { status: 'ok', content: 'marked' }),
  present: () => 'mark',
};

/** A first process stopped while its `mark` call waits on an approval: the log it leaves. */
async function stoppedWhileAsking(): Promise<Entry[]> {
  h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'mark', arguments: {} }] } : { text: 'done' }), { tools: [mark], approval: 'ask', answerer: () => new Promise<ApprovalAnswer>(() => {}) });
  void h.session.send('mark it');
  while (!h.entries().some((e) => e.kind === 'approval/asked')) await tick();
  const left = h.entries().slice();
  h.session.actor.stop();
  return left;
}

it('a pending approval asked again as a continued session opens reaches the desk once hosted, and a client answers it', async () => {
  const left = await stoppedWhileAsking();
  let startedInOpen = false;
  hosted = await HostedSession.open(
    async (_params, hooks) => {
      const s = createSession({
        id: 'test-session',
        cwd: h!.workspace,
        bridleHome: h!.bridleHome,
        settings: { approval: 'ask', sandbox: 'off' },
        services: { model: { ...createScriptedProviderFromFunction(() => ({ text: 'done' })), name: 'scripted-test' }, store: createMemoryStore(), clock: steppingClock(Date.UTC(2026, 5, 1)), tools: [mark] },
        sleep: async () => {},
        existing: left,
        snapshot: restoreSessionSnapshot(left),
        answerer: hooks.answerer,
      });
      await new Promise((r) => setTimeout(r, 10));
      // Not started: nothing ran and nothing was asked while `open` had the session.
      startedInOpen = s.recorder.entries.length !== left.length;
      return s;
    },
    {},
    (m) => {
      throw new Error(m);
    },
  );
  expect(startedInOpen).toBe(false);
  for (let i = 0; i < 100 && !hosted.desk.respond('t1.s1.c1', 'allowed-once', 'ws:client-1'); i++) await tick();
  const out = await hosted.bridle.idle();
  expect(out).toMatchObject({ reason: 'completed' });
  expect(runs).toEqual(['mark']);
  expect(hosted.bridle.recorder.entries.filter((e) => e.kind === 'approval/decided')).toMatchObject([{ callId: 't1.s1.c1', outcome: 'allowed-once', by: 'ws:client-1' }]);
});
