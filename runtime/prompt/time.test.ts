/**
 * Course ch. 6, the ephemeral "current time" context injector: the date and
 * time from the session's clock, refreshed at most once per turn (so two steps
 * of one turn send identical bytes and the prompt cache holds), logged like
 * every header change, and reproduced byte for byte by replay.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import { builtinTools } from '../../tools/index.js';
import { timeText } from './time.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** A clock that moves seven minutes at every reading: any time read at assembly, not at the turn's start, would show. */
const racingClock = (start = Date.UTC(2026, 11, 2, 9, 0)) => {
  let t = start;
  return () => (t += 7 * 60_000);
};
const timeLine = (system: string) => system.split('\n').find((l) => l.startsWith('Current date and time:'));

describe('the current-time section (course ch. 6)', () => {
  it('two steps of one turn send identical time text; the next turn may differ; each change is a logged header; replay is byte-identical', async () => {
    h = createHarness((_r, i) => (i === 0 || i === 2 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: `answer ${i}` }), {
      clock: racingClock(),
      patch: [{ insert: true, id: 'prompt:time', use: 'time' }],
    });
    await h.session.run('what day is it?');
    await h.session.run('and now?');
    const systems = h.requests.map((r) => r.request.system ?? '');
    expect(systems).toHaveLength(4);
    const lines = systems.map(timeLine);
    expect(lines.every((l) => l !== undefined)).toBe(true);
    // Steps 1 and 2 of turn 1, then of turn 2: the same text within a turn, the turn's own start time.
    expect(lines[1]).toBe(lines[0]);
    expect(lines[3]).toBe(lines[2]);
    expect(lines[2]).not.toBe(lines[0]);
    const starts = h.entries().filter((e): e is EntryOf<'turn/start'> => e.kind === 'turn/start');
    expect(lines[0]).toBe(timeText(starts[0]!.at, { refreshMinutes: 1 }));
    expect(lines[2]).toBe(timeText(starts[1]!.at, { refreshMinutes: 1 }));
    // The time line is the prompt's tail: the prefix before it is the same in both turns.
    expect(systems[0]!.endsWith(lines[0]!)).toBe(true);
    // One header per turn, logged, and what each request carried.
    const headers = h.entries().filter((e): e is EntryOf<'request/header'> => e.kind === 'request/header');
    expect(headers.map((x) => x.turn)).toEqual(['t1', 't2']);
    expect(headers.map((x) => timeLine(x.system))).toEqual([lines[0], lines[2]]);
    const r = await replayThroughMachines(h.entries(), builtinTools());
    expect(r.note).toBeUndefined();
    expect(r.identical).toBe(true);
  });

  it('only fires after a refresh interval: turns inside one window send the same header, and no new one is logged', async () => {
    h = createHarness(() => ({ text: 'ok' }), { patch: [{ insert: true, id: 'prompt:time', use: 'time', config: { refreshMinutes: 60 } }] });
    await h.session.run('one');
    await h.session.run('two');
    const lines = h.requests.map((r) => timeLine(r.request.system ?? ''));
    expect(lines[0]).toBe('Current date and time: Thursday 2026-01-01 00:00 UTC (as this turn began, to 60 minutes).');
    expect(lines[1]).toBe(lines[0]);
    expect(h.entries().filter((e) => e.kind === 'request/header')).toHaveLength(1);
  });

  it('timeText is pure: floored to its interval, and nothing for a time it cannot read', () => {
    expect(timeText('2026-12-02T09:59:59.999Z', { refreshMinutes: 1 })).toBe('Current date and time: Wednesday 2026-12-02 09:59 UTC (as this turn began).');
    expect(timeText('2026-12-02T09:59:59.999Z', { refreshMinutes: 30 })).toBe('Current date and time: Wednesday 2026-12-02 09:30 UTC (as this turn began, to 30 minutes).');
    expect(timeText('', { refreshMinutes: 1 })).toBeUndefined();
    expect(timeText('not a time', { refreshMinutes: 1 })).toBeUndefined();
  });
});
