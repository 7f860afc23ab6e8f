import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AnswerRequest } from '../actors/approval.js';
import { terminalAnswerer } from './terminal-answerer.js';

const request = (signal = new AbortController().signal): AnswerRequest => ({
  callId: 't1.s1.c1',
  name: 'bash',
  arguments: '{"command":"npm test"}',
  reason: 'bash changes the workspace or runs commands',
  presented: 'bash: npm test',
  always: { tool: 'bash', pattern: '^npm test$' },
  signal,
});

function terminal() {
  const input = new PassThrough();
  const out = new PassThrough();
  let shown = '';
  out.on('data', (d) => (shown += d));
  const prompted = () => new Promise<void>((r) => {
    const check = () => (shown.includes('[a]lways') ? r() : setTimeout(check, 1));
    check();
  });
  return { input, out, shown: () => shown, prompted };
}

describe('terminalAnswerer', () => {
  it('shows the call as the presenter renders it and maps y / n / a', async () => {
    for (const [typed, outcome] of [['y', 'allowed-once'], ['a', 'allowed-always'], ['n', 'rejected'], ['what?', 'rejected']] as const) {
      const t = terminal();
      const answer = terminalAnswerer(t.out, t.input)(request());
      await t.prompted();
      t.input.write(`${typed}\n`);
      expect((await answer).outcome).toBe(outcome);
      expect(t.shown()).toContain('? bash: npm test');
    }
  });

  it('answers unavailable when the input closes, and cancelled when the call is cancelled', async () => {
    const t = terminal();
    const closed = terminalAnswerer(t.out, t.input)(request());
    await t.prompted();
    t.input.end();
    expect(await closed).toMatchObject({ outcome: 'unavailable' });

    const t2 = terminal();
    const c = new AbortController();
    const cancelled = terminalAnswerer(t2.out, t2.input)(request(c.signal));
    await t2.prompted();
    c.abort();
    expect(await cancelled).toMatchObject({ outcome: 'cancelled' });
  });
});
