/**
 * One feed, subscribe then start (ADR 0051): `createSession` returns a session that has done nothing; a listener
 * subscribed then sees every event from `session/start` on, through one union; `start()` begins it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import type { SessionFeedEvent } from './wiring/feed.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.session.close().catch(() => undefined);
  h?.cleanup();
  h = undefined;
});

const kinds = (events: SessionFeedEvent[], type: 'entry.appended' | 'entry.saved') => events.flatMap((e) => (e.type === type ? [e.entry.kind] : []));

describe('a session feed', () => {
  it('subscribe before start sees session/start', async () => {
    h = createHarness(() => ({ text: 'hello there' }), { unstarted: true });
    const events: SessionFeedEvent[] = [];
    h.session.subscribe((e) => events.push(e));
    expect(events).toEqual([]);
    h.session.start();
    expect(events[0]).toMatchObject({ type: 'entry.appended', entry: { seq: 1, kind: 'session/start', id: 'test-session' } });
    await h.session.run('hi');
    await h.session.close();
    // Every entry of the log, in order, as appended; the live text; the machines' states; the close, last.
    expect(kinds(events, 'entry.appended')).toEqual(h.entries().map((e) => e.kind));
    expect(kinds(events, 'entry.saved')).toContain('turn/end');
    expect(events.map((e) => (e.type === 'chunk.streamed' && e.chunk.type === 'text-delta' ? e.chunk.text : '')).join('')).toBe('hello there');
    expect(events.filter((e) => e.type === 'state.changed').map((e) => JSON.stringify((e as { snapshot: { value: unknown } }).snapshot.value))).toContain(JSON.stringify({ running: 'active' }));
    expect(events.at(-1)).toEqual({ type: 'session.closed' });
  });

  it('an unsubscribe stops delivery', async () => {
    h = createHarness(() => ({ text: 'ok' }), { unstarted: true });
    const kept: SessionFeedEvent[] = [];
    const dropped: SessionFeedEvent[] = [];
    h.session.subscribe((e) => kept.push(e));
    const stop = h.session.subscribe((e) => dropped.push(e));
    h.session.start();
    await h.session.run('first');
    const seen = dropped.length;
    stop();
    await h.session.run('second');
    expect(dropped).toHaveLength(seen);
    expect(kept.length).toBeGreaterThan(seen);
    // Stopped from inside a delivery: the listener gets nothing after it, not even the rest of that event's round.
    let late = 0;
    const self: () => void = h.session.subscribe(() => {
      late++;
      self();
    });
    await h.session.run('third');
    expect(late).toBe(1);
  });

  it('a created session runs nothing until start: no entry, no turn, input refused as SESSION_NOT_STARTED', async () => {
    h = createHarness(() => ({ text: 'ok' }), { unstarted: true });
    expect(h.entries()).toEqual([]);
    await expect(h.session.send('too early')).rejects.toMatchObject({ code: 'SESSION_NOT_STARTED' });
    await expect(h.session.run('too early')).rejects.toMatchObject({ code: 'SESSION_NOT_STARTED' });
    await expect(h.session.idle()).rejects.toMatchObject({ code: 'SESSION_NOT_STARTED' });
    expect(h.entries()).toEqual([]);
    expect(h.session.start()).toBe(h.session);
    // A second start does nothing: one header.
    h.session.start();
    await h.session.run('now');
    expect(h.entries().filter((e) => e.kind === 'session/start')).toHaveLength(1);
    expect(h.entries().filter((e) => e.kind === 'turn/end')).toHaveLength(1);
  });

  it("a listener's throw reaches neither the session nor the listeners after it", async () => {
    h = createHarness(() => ({ text: 'ok' }), { unstarted: true });
    const after: string[] = [];
    h.session.subscribe(() => {
      throw new Error('a broken display');
    });
    h.session.subscribe((e) => void (e.type === 'entry.appended' && after.push(e.entry.kind)));
    h.session.start();
    expect(await h.session.run('hi')).toMatchObject({ reason: 'completed' });
    expect(after).toEqual(h.entries().map((e) => e.kind));
  });

  it('closed before it started: the log is closed, nothing was written, and it cannot start any more', async () => {
    h = createHarness(() => ({ text: 'ok' }), { unstarted: true });
    const events: SessionFeedEvent[] = [];
    h.session.subscribe((e) => events.push(e));
    await h.session.close();
    expect(h.store.lines).toEqual([]);
    expect(events).toEqual([{ type: 'session.closed' }]);
    expect(() => h!.session.start()).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }));
  });
  it('inspects the actors only while watched: no inspector unsubscribed, one from the first subscribe to the last unsubscribe (#26)', async () => {
    h = createHarness(() => ({ text: 'ok' }), { unstarted: true });
    const system = h.session.actor.system;
    const inspect = system.inspect.bind(system);
    let attached = 0;
    system.inspect = (observer) => {
      attached++;
      const sub = inspect(observer);
      return { unsubscribe: () => (attached--, sub.unsubscribe()) };
    };
    h.session.start();
    await h.session.run('unwatched');
    expect(attached).toBe(0);
    const states: string[] = [];
    const first = h.session.subscribe((e) => void (e.type === 'state.changed' && states.push(JSON.stringify(e.snapshot.value))));
    const second = h.session.subscribe(() => undefined);
    expect(attached).toBe(1);
    await h.session.run('watched');
    expect(states).toContain(JSON.stringify({ running: 'active' }));
    second();
    expect(attached).toBe(1);
    first();
    expect(attached).toBe(0);
    const seen = states.length;
    await h.session.run('unwatched again');
    expect(states).toHaveLength(seen);
    h.session.subscribe(() => undefined);
    expect(attached).toBe(1);
  });
});
