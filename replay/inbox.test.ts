import { describe, expect, it } from 'vitest';
import { inboxPlan, leftoverSends, type InboxNow } from './inbox.js';
import type { InboxTarget } from './script.js';

const now = (o: Partial<InboxNow> = {}): InboxNow => ({ active: true, turnSteer: [], turnInject: [], followups: [], injects: [], ...o });
const target = (o: Partial<InboxTarget> = {}): InboxTarget => ({ followups: [], injects: [], leftoverSteer: [], leftoverInject: [], ...o });

describe('inboxPlan', () => {
  it('nothing to do when the inbox already matches', () => {
    expect(inboxPlan(now({ followups: ['a'] }), target({ followups: ['a'] }))).toEqual({ leftovers: [], cancel: false, queued: [] });
  });

  it('a steer that came too late becomes the turn leftover, ahead of what the session queued; followups after it', () => {
    const plan = inboxPlan(now({ followups: ['q'] }), target({ followups: ['late', 'q', { text: 'note', origin: 'resume' }], leftoverSteer: ['late'] }));
    expect(plan).toEqual({
      leftovers: [{ text: 'late', mode: 'steer' }],
      cancel: false,
      queued: [{ text: 'note', mode: 'followup', origin: 'resume' }],
    });
  });

  it('injects the session holds for later: a cancel first, which an ending turn does not notice', () => {
    expect(inboxPlan(now(), target({ injects: ['later'] }))).toEqual({ leftovers: [], cancel: true, queued: [{ text: 'later', mode: 'inject' }] });
    expect(inboxPlan(now({ active: false }), target({ injects: ['later'] }))).toEqual({ leftovers: [], cancel: false, queued: [{ text: 'later', mode: 'inject' }] });
  });

  it('undefined when no input sent now can give the target', () => {
    // Leftovers need an active session; a queue cannot lose what it holds.
    expect(inboxPlan(now({ active: false }), target({ followups: ['s'], leftoverSteer: ['s'] }))).toBeUndefined();
    expect(inboxPlan(now({ followups: ['a'] }), target({ followups: ['b'] }))).toBeUndefined();
    expect(leftoverSends({ turnSteer: ['x'], turnInject: [] }, target({ leftoverSteer: ['y'] }))).toBeUndefined();
  });
});
