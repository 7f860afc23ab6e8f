/**
 * Compaction keeps the cached head (issue 21 item 3), on each wire's real request bytes: over a 3-turn,
 * 40-step session that compacts several times, the system prompt and tools never change; a summary
 * request extends the request before it (it replays the projection, then the instruction); after a
 * compaction the next requests share the head with the ones before it (a summary that takes in an earlier
 * summary starts the conversation anew, so the head is all that can be shared), and extend each other
 * again. The one break per compaction is the first request after it.
 */
import { describe, expect, it } from 'vitest';
import { runCacheSession } from '../../test/helpers/cache-session.js';
import { WIRES, type Wire } from '../../test/helpers/wire-fake.js';
import { extendsPrefix } from '../../test/helpers/wire-prefix.js';

describe.each(WIRES)('compaction on the %s wire', (wire: Wire) => {
  it('keeps the cached head: system and tools unchanged, summary requests extend, post-compaction requests extend each other', async () => {
    const run = await runCacheSession(wire);
    expect(run.steps).toBe(40);
    expect(run.compactions).toBeGreaterThanOrEqual(2);
    const rs = run.requests;
    for (const [i, r] of rs.entries()) expect(r.parts.head, `request ${i + 1}: system and tools`).toBe(rs[0]!.parts.head);
    for (let i = 1; i < rs.length; i++) {
      const [a, b] = [rs[i - 1]!, rs[i]!];
      const ext = extendsPrefix(a.parts.conversation, b.parts.conversation);
      if (a.summary) {
        // The first request after a compaction: the summary replaced what it summarized; the head (checked above) is still the cached prefix.
        expect(b.epoch, `request ${i + 1} follows a compaction`).toBe(a.epoch + 1);
        expect(b.summary).toBe(false);
        expect(ext, `request ${i + 1}: a compaction that replaced nothing`).toBe(false);
      } else expect(ext, `request ${i + 1} (${b.summary ? 'summary' : 'step'}) extends request ${i}`).toBe(true);
    }
  });
});
