import { describe, expect, it } from 'vitest';
import { benchFanout } from './fanout.js';

describe('the fan-out benchmark', () => {
  it('delivers every entry of each turn to every client, in order', async () => {
    const r = await benchFanout({ clients: 20, turns: 2 });
    expect(r.clients).toBe(20);
    // turn/start, user/message, two steps with their headers, answers, calls and results, turn/end, checkpoint.
    expect(r.entries).toBeGreaterThan(10);
    expect(r.medianMs).toBeGreaterThan(0);
  });
});
