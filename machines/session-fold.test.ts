import { afterEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { checkCheckpoints, durableView, foldSession, restoreSessionSnapshot, sessionEventsFromLog } from './session-fold.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** Three turns: one with a tool call, one blocked by pre-step, one that fails. */
async function threeTurns(): Promise<Entry[]> {
  h = createHarness((req, i) => (i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : i === 1 ? { text: 'listed' } : { error: { code: 'AUTH', message: 'no' } }), {
    preStep: async ({ text }) => (text === 'blocked' ? { kind: 'reject', reason: 'nope' } : { kind: 'enter', text }),
  });
  await h.session.run('look');
  await h.session.run('blocked');
  await h.session.run('fail');
  return [...h.entries()];
}
const persisted = (e: Entry) => (e as EntryOf<'checkpoint'>).snapshot as { value: unknown; context: { turns: number; last?: never } };

describe('the session fold', () => {
  it('maps the log to session events: one input per turn/start, one done per turn/end', async () => {
    const entries = await threeTurns();
    const events = sessionEventsFromLog(entries);
    expect(events.map((e) => e.type)).toEqual(Array(3).fill(['session.input.received', 'xstate.done.actor.turn']).flat());
  });

  it('every checkpoint equals the fold of the log up to it', async () => {
    const entries = await threeTurns();
    const checkpoints = entries.filter((e) => e.kind === 'checkpoint');
    expect(checkpoints).toHaveLength(3);
    for (const cp of checkpoints) {
      const upTo = entries.slice(0, entries.indexOf(cp));
      const folded = foldSession(upTo);
      expect(durableView(persisted(cp))).toEqual(durableView(folded));
    }
    expect(checkCheckpoints(entries)).toEqual([]);
    expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
  });

  it('a checkpoint that disagrees with the fold is named', async () => {
    const entries = await threeTurns();
    const i = entries.findIndex((e) => e.kind === 'checkpoint');
    const cp = entries[i] as EntryOf<'checkpoint'>;
    const snap = structuredClone(cp.snapshot) as { context: { turns: number } };
    snap.context.turns = 7;
    entries[i] = { ...cp, snapshot: snap };
    expect(checkCheckpoints(entries)).toMatchObject([{ violation: 'checkpoint-mismatch', seq: cp.seq }]);
  });

  it('restore = newest checkpoint + the tail = a full replay of the whole log', async () => {
    const entries = await threeTurns();
    const full = durableView(foldSession(entries));
    expect(full).toMatchObject({ value: 'idle', turns: 3, last: { turn: 't3', reason: 'error', code: 'AUTH' } });
    expect(durableView(restoreSessionSnapshot(entries) as never)).toEqual(full);
    // Without the last checkpoint, restore starts from the one before and replays a longer tail.
    const noLast = entries.slice(0, -1);
    expect(durableView(restoreSessionSnapshot(noLast) as never)).toEqual(durableView(foldSession(noLast)));
    // A checkpoint this version cannot read (an older machine's) is skipped, not restored.
    const old = entries.map((e) => (e.kind === 'checkpoint' ? { ...e, snapshot: { value: { running: 'gone' }, status: 'active', context: {} } } : e));
    expect(durableView(restoreSessionSnapshot(old) as never)).toEqual(full);
  });

  it('the restored snapshot takes its settings from the new input, and its inbox is empty', async () => {
    const entries = await threeTurns();
    const s = restoreSessionSnapshot(entries, { maxSteps: 7 }) as unknown as { context: { maxSteps: number; followups: unknown[]; injects: unknown[] } };
    expect(s.context).toMatchObject({ maxSteps: 7, followups: [], injects: [] });
  });

  it('refuses to restore a log that ends mid-turn', async () => {
    const entries = await threeTurns();
    const cut = entries.slice(0, entries.findLastIndex((e) => e.kind === 'turn/end'));
    expect(() => restoreSessionSnapshot(cut)).toThrow(/inside a turn/);
  });
});
