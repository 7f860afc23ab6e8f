/**
 * Golden logs: real runs recorded under test/golden/. Replaying each through
 * the machines with its recorded outcomes must reproduce it byte for byte.
 * Re-record after an intended change of behaviour: see README.md here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayThroughMachines } from '../../replay/replay.js';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { checkCheckpoints } from '../../machines/session-fold.js';
import { builtinTools } from '../../tools/index.js';

const dir = new URL('.', import.meta.url).pathname;
const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

/** What each recorded log is there to hold (README.md here): a re-recording that loses it fails. */
const holds: Record<string, (es: Entry[]) => boolean> = {
  'ctrl-c.jsonl': (es) => es.some((e) => e.kind === 'tool/result' && e.code === 'ABORTED') && es.some((e) => e.kind === 'turn/end' && e.reason === 'aborted'),
  'crash-resume.jsonl': (es) => es.some((e) => e.kind === 'repair') && es.some((e) => e.kind === 'user/message' && e.origin === 'resume'),
  'compaction.jsonl': (es) =>
    ['proactive', 'manual'].every((t) => es.some((e) => e.kind === 'compaction/start' && e.trigger === t)) && es.some((e) => e.kind === 'compaction/summary') && es.some((e) => e.kind === 'checkpoint' && JSON.stringify(e.snapshot).includes('"compactPending":true')),
  // Two reads run together (both dispatched before either result); the write only after both results; the read after it, after its result.
  'schedule.jsonl': (es) => {
    const at = (kind: string, callId: string) => es.findIndex((e) => e.kind === kind && 'callId' in e && e.callId === callId);
    const [r1, r2, w, r3] = es.filter((e) => e.kind === 'tool/call').map((e) => (e as { callId: string }).callId);
    if (!r1 || !r2 || !w || !r3) return false;
    const overlap = Math.max(at('tool/dispatch', r1), at('tool/dispatch', r2)) < Math.min(at('tool/result', r1), at('tool/result', r2));
    return overlap && at('tool/dispatch', w) > Math.max(at('tool/result', r1), at('tool/result', r2)) && at('tool/dispatch', r3) > at('tool/result', w);
  },
  'approvals.jsonl': (es) =>
    es.some((e) => e.kind === 'approval/decided' && e.outcome === 'rejected') && es.some((e) => e.kind === 'approval/decided' && e.rule !== undefined) && es.some((e) => e.kind === 'tool/result' && e.status === 'denied' && e.content.includes('read-only')),
};

describe('golden logs', () => {
  it('there is at least one', () => expect(logs.length).toBeGreaterThan(0));
  for (const [f, check] of Object.entries(holds)) it(`${f} holds what it was recorded for`, () => expect(check(parseLog(readFileSync(join(dir, f), 'utf8')).entries)).toBe(true));
  for (const f of logs) {
    it(`${f} replays through the machines byte for byte`, async () => {
      const text = readFileSync(join(dir, f), 'utf8');
      const { entries, torn } = parseLog(text);
      expect(torn).toBeUndefined();
      expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
      const r = await replayThroughMachines(entries, builtinTools());
      expect(r.original).toBe(text);
      if (!r.identical) {
        const line = r.firstDifference! - 1;
        expect(r.text.split('\n')[line]).toBe(r.original.split('\n')[line]);
      }
      expect(r.identical).toBe(true);
    });
  }
});
