import { describe, expect, it } from 'vitest';
import type { AnswerRequest } from '../ports/approval.js';
import { askApproval } from './ask-approval.js';

const req: Omit<AnswerRequest, 'signal'> = {
  callId: 't1.s1.c1',
  name: 'bash',
  arguments: '{"command":"ls"}',
  reason: 'bash runs commands',
  presented: 'bash: ls',
  always: { tool: 'bash', pattern: '^ls$' },
};
const live = () => new AbortController().signal;

describe('askApproval (I6: a missing, throwing or timed-out answerer denies)', () => {
  it('is unavailable with no answerer', async () => {
    expect(await askApproval({}, req, live())).toEqual({ outcome: 'unavailable', by: 'no answerer' });
  });

  it('is unavailable when the answerer throws or rejects', async () => {
    const a1 = await askApproval({ answerer: () => { throw new Error('tty gone'); } }, req, live());
    const a2 = await askApproval({ answerer: async () => { throw new Error('ws closed'); } }, req, live());
    expect(a1).toEqual({ outcome: 'unavailable', by: 'answerer failed: tty gone' });
    expect(a2).toEqual({ outcome: 'unavailable', by: 'answerer failed: ws closed' });
  });

  it('is unavailable when the answer is outside the closed set', async () => {
    const a = await askApproval({ answerer: async () => ({ outcome: 'sure', by: 'x' }) as never }, req, live());
    expect(a.outcome).toBe('unavailable');
    expect(a.by).toMatch(/invalid answer/);
  });

  it('is unavailable after the answer timeout, and tells the answerer to stop', async () => {
    let answererSignal: AbortSignal | undefined;
    const a = await askApproval({ answerer: (r) => ((answererSignal = r.signal), new Promise(() => undefined)), timeoutMs: 10 }, req, live());
    expect(a).toEqual({ outcome: 'unavailable', by: 'no answer within 10 ms' });
    expect(answererSignal?.aborted).toBe(true);
  });

  it('is cancelled when the call is cancelled while it waits', async () => {
    const c = new AbortController();
    const p = askApproval({ answerer: () => new Promise(() => undefined) }, req, c.signal);
    c.abort();
    expect(await p).toEqual({ outcome: 'cancelled', by: 'cancel' });
  });

  it('passes allowed-once through and gives allowed-always the exact rule unless the answer names a valid one for the same tool', async () => {
    expect(await askApproval({ answerer: async () => ({ outcome: 'allowed-once', by: 'me' }) }, req, live())).toEqual({ outcome: 'allowed-once', by: 'me' });
    expect(await askApproval({ answerer: async () => ({ outcome: 'allowed-always', by: 'me' }) }, req, live())).toEqual({ outcome: 'allowed-always', by: 'me', rule: { tool: 'bash', pattern: '^ls$' } });
    const own = await askApproval({ answerer: async () => ({ outcome: 'allowed-always', by: 'me', rule: { tool: 'bash', pattern: '^ls( -l)?$' } }) }, req, live());
    expect(own.rule).toEqual({ tool: 'bash', pattern: '^ls( -l)?$' });
    const other = await askApproval({ answerer: async () => ({ outcome: 'allowed-always', by: 'me', rule: { tool: 'write_file', pattern: '.*' } }) }, req, live());
    expect(other.outcome).toBe('unavailable');
    const broken = await askApproval({ answerer: async () => ({ outcome: 'allowed-always', by: 'me', rule: { tool: 'bash', pattern: '(' } }) }, req, live());
    expect(broken.outcome).toBe('unavailable');
  });
});
