import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkModelVisibleIsLogged, createHarness, type Harness } from '../test/helpers/harness.js';
import type { EntryOf } from '../log/entries.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const kinds = (h: Harness) => h.entries().map((e) => e.kind);

describe('a session', () => {
  it('runs a multi-step turn: parallel calls, an unknown tool and bad arguments among them (I1–I4, I7)', async () => {
    h = createHarness((_req, i) =>
      i === 0
        ? {
            text: 'Looking around.',
            toolCalls: [
              { name: 'write_file', arguments: { path: 'a.txt', content: 'hello\n' } },
              { name: 'no_such_tool', arguments: {} },
              { name: 'read_file', arguments: '{"path": ' },
              { name: 'list_dir', arguments: {} },
            ],
          }
        : i === 1
          ? { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }
          : { text: 'Done.' },
    );
    const out = await h.session.run('make a file');
    expect(out.reason).toBe('completed');
    expect(out.steps).toBe(3);
    expect(fs.readFileSync(path.join(h.workspace, 'a.txt'), 'utf8')).toBe('hello\n');

    const e = h.entries();
    // I3: one turn/start, one turn/end.
    expect(kinds(h).filter((k) => k === 'turn/start')).toHaveLength(1);
    expect(kinds(h).filter((k) => k === 'turn/end')).toHaveLength(1);
    // I2: every call has exactly one result, after it.
    const calls = e.filter((x): x is EntryOf<'tool/call'> => x.kind === 'tool/call');
    const results = e.filter((x): x is EntryOf<'tool/result'> => x.kind === 'tool/result');
    expect(calls).toHaveLength(5);
    for (const c of calls) {
      const rs = results.filter((r) => r.callId === c.callId);
      expect(rs).toHaveLength(1);
      expect(rs[0]!.seq).toBeGreaterThan(c.seq);
    }
    // I4: invalid calls never dispatch and name the problem; the others still ran.
    const byCall = new Map(results.map((r) => [r.callId, r]));
    expect(byCall.get('t1.s1.c2')).toMatchObject({ status: 'rejected', code: 'UNKNOWN_TOOL' });
    expect(byCall.get('t1.s1.c3')).toMatchObject({ status: 'rejected', code: 'INVALID_JSON' });
    expect(byCall.get('t1.s1.c1')).toMatchObject({ status: 'ok' });
    expect(byCall.get('t1.s1.c4')).toMatchObject({ status: 'ok' });
    const dispatched = new Set(e.filter((x) => x.kind === 'tool/dispatch').map((x) => (x as EntryOf<'tool/dispatch'>).callId));
    expect([...dispatched].sort()).toEqual(['t1.s1.c1', 't1.s1.c4', 't1.s2.c1']);
    // Results reach the model in call order.
    const second = h.requests[1]!.request.messages;
    expect(second.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(['call_0_0', 'call_0_1', 'call_0_2', 'call_0_3']);
    // I1.
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    // I7: only name, description, parameters.
    for (const t of h.requests[0]!.request.tools) expect(Object.keys(t).sort()).toEqual(['description', 'name', 'parameters']);
    // The header is logged inside its step, once, not per step.
    expect(kinds(h).indexOf('request/header')).toBe(kinds(h).indexOf('step/start') + 1);
    // The header is logged once, not per step.
    expect(kinds(h).filter((k) => k === 'request/header')).toHaveLength(1);
    // A checkpoint follows the turn's end.
    expect(kinds(h).slice(-2)).toEqual(['turn/end', 'checkpoint']);
  });

  it('a listener subscribed before start sees every entry from session/start on, as it is appended', async () => {
    const seen: string[] = [];
    h = createHarness(() => ({ text: 'ok' }), { subscribe: (e) => void (e.type === 'entry.appended' && seen.push(`${e.entry.seq} ${e.entry.kind}`)) });
    await h.session.run('hello');
    expect(seen).toEqual(h.entries().map((e) => `${e.seq} ${e.kind}`));
    expect(seen[0]).toBe('1 session/start');
  });

  it('a pre-step reject still closes a durable turn with zero steps', async () => {
    h = createHarness(() => ({ text: 'never asked' }), { preStep: async () => ({ kind: 'reject', reason: 'off topic' }) });
    const out = await h.session.run('hello');
    expect(out).toMatchObject({ reason: 'blocked', steps: 0, cause: 'off topic' });
    expect(kinds(h)).toEqual(['session/start', 'session/input', 'turn/start', 'turn/end', 'checkpoint']);
    expect(h.requests).toHaveLength(0);
  });

  it('a pre-step rewrite is what the model sees; turn/start keeps the claimed input', async () => {
    h = createHarness(() => ({ text: 'ok' }), { preStep: async ({ text }) => ({ kind: 'enter', text: text.toUpperCase() }) });
    await h.session.run('hello');
    expect(h.requests[0]!.request.messages).toEqual([{ role: 'user', content: 'HELLO' }]);
    expect(h.entries().find((e) => e.kind === 'turn/start')).toMatchObject({ input: 'hello' });
  });

  it('retries a retryable failure, logging each retry, then succeeds', async () => {
    h = createHarness((_r, i) => (i < 2 ? { error: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 5 } } : { text: 'fine' }));
    const out = await h.session.run('hi');
    expect(out.reason).toBe('completed');
    const retries = h.entries().filter((e) => e.kind === 'model/retry');
    expect(retries.map((r) => (r as EntryOf<'model/retry'>).delayMs)).toEqual([5, 5]);
    expect(kinds(h).filter((k) => k === 'step/start')).toHaveLength(1);
  });

  it('a final model error ends the turn with its code', async () => {
    h = createHarness(() => ({ error: { code: 'AUTH', message: 'bad key' } }));
    const out = await h.session.run('hi');
    expect(out).toMatchObject({ reason: 'error', code: 'AUTH' });
  });

  it('max-steps ends a turn whose tools keep owing requests', async () => {
    h = createHarness(() => ({ toolCalls: [{ name: 'list_dir', arguments: {} }] }), { maxSteps: 3 });
    const out = await h.session.run('loop');
    expect(out).toMatchObject({ reason: 'max-steps', steps: 3 });
  });

  it('followups queue as turns of their own and each runs exactly once', async () => {
    h = createHarness((req) => ({ text: `echo ${(req.messages.at(-1) as { content: string }).content}` }));
    h.session.send('one');
    h.session.send('two');
    h.session.send('three');
    await h.session.idle();
    const inputs = h.entries().filter((e) => e.kind === 'turn/start').map((e) => (e as EntryOf<'turn/start'>).input);
    expect(inputs).toEqual(['one', 'two', 'three']);
    expect(kinds(h).filter((k) => k === 'checkpoint')).toHaveLength(3);
  });

  it('inject rides along with the next step without waking the session', async () => {
    h = createHarness(() => ({ text: 'ok' }));
    h.session.send('remember: tabs', 'inject');
    expect(h.session.actor.getSnapshot().value).toBe('idle');
    await h.session.run('go');
    expect(h.requests[0]!.request.messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'user', content: 'remember: tabs' },
    ]);
  });

  it('a cancel mid-stream keeps partial text as interrupted and ends the turn aborted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    h = createHarness({
      id: 'slow',
      async *stream(_req, signal) {
        yield { type: 'block-start', index: 0, block: { type: 'text' } };
        yield { type: 'text-delta', index: 0, text: 'partial ' };
        release();
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        yield { type: 'finish', finish: { kind: 'aborted' } };
      },
    });
    const done = h.session.run('go');
    await gate;
    await new Promise((r) => setImmediate(r));
    await h.session.cancel('user');
    const out = await done;
    expect(out).toMatchObject({ reason: 'aborted', cause: 'user' });
    const msg = h.entries().find((e) => e.kind === 'assistant/message') as EntryOf<'assistant/message'>;
    expect(msg).toMatchObject({ interrupted: true, blocks: [{ type: 'text', text: 'partial ' }] });
  });
});
