/** A scripted 1,000-step turn stays inside a 16,000-token window: every request's estimate, summary requests included. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { estimateRequestTokens } from '../../log/context/tokens.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { checkModelVisibleIsLogged, createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

describe('a long session under compaction', () => {
  it('1,000 tool steps in a 16,000-token window: no request over the window, I1 holds, nothing deleted', async () => {
    const STEPS = 1000;
    const WINDOW = 16_000;
    let steps = 0;
    h = createHarness(
      (req) => {
        if (isSummaryInstruction(req.messages.at(-1))) return { text: `## Request and intent\nread the log\n## Key facts\nat step ${steps}\n## Files touched\nlog.txt\n## Errors and fixes\nnone\n## Current work\nreading\n## Next step\nread on` };
        steps++;
        return steps <= STEPS ? { toolCalls: [{ name: 'read_file', arguments: { path: 'log.txt', offset: (steps % 80) + 1, limit: 12 } }] } : { text: 'Read it all.' };
      },
      { contextWindow: WINDOW, maxSteps: STEPS + 10 },
    );
    fs.writeFileSync(path.join(h.workspace, 'log.txt'), Array.from({ length: 100 }, (_, i) => `event ${i}: something happened at this point in the log`).join('\n'));
    const out = await h.session.run('read log.txt from top to bottom, a few lines at a time');
    expect(out).toMatchObject({ reason: 'completed', steps: STEPS + 1 });

    const over = h.requests.map((r) => estimateRequestTokens(r.request)).filter((t) => t > WINDOW);
    expect(over).toEqual([]);
    const summaries = h.requests.filter((r) => isSummaryInstruction(r.request.messages.at(-1)));
    const ends = h.entries().filter((e): e is EntryOf<'compaction/end'> => e.kind === 'compaction/end');
    expect(summaries.length).toBeGreaterThan(5);
    expect(ends.length).toBe(summaries.length);
    expect(ends.every((e) => e.outcome === 'compacted' && e.tokensAfter < e.tokensBefore)).toBe(true);
    // Nothing was deleted: every tool result ever produced is still in the log.
    expect(h.entries().filter((e) => e.kind === 'tool/result')).toHaveLength(STEPS);
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    expect(deriveMessages(h.entries())).toEqual(h.session.recorder.projection.messages);
    expect(verifyLog(h.entries()).violations).toEqual([]);
  }, 120_000);
});
