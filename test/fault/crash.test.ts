/**
 * Fault injection: the real CLI runs a scripted model whose bash calls each
 * append a marker line and sleep; the child is killed with SIGKILL at a seeded
 * point; `bridle resume --continue` then repairs and carries on. Whatever the
 * point: the log verifies, no acknowledged line is lost or rewritten, no
 * non-idempotent call ran twice, and every call that ran was dispatched
 * (durably) first.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import type { EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { cliBuilt, completeLines, createWorld, logHas, seeded, waitFor } from './cli-world.js';

const bash = (label: string) => ({ name: 'bash', arguments: { command: `echo ${label} >> marker; sleep 0.4` } });
const WORK = {
  label: 'scripted: fault work',
  responses: [{ text: 'two commands', toolCalls: [bash('c1'), bash('c2')] }, { toolCalls: [bash('c3')] }, { text: 'all done' }],
};
const CALL_OF: Record<string, string> = { c1: 't1.s1.c1', c2: 't1.s1.c2', c3: 't1.s2.c1' };

interface Point {
  name: string;
  kind: string;
  callId: string;
  /** Simulate a write cut off by the crash: a torn, never-acknowledged last line. */
  tear?: boolean;
  /** Result codes the repair must have given, where the point decides them (the tools sleep 400 ms). */
  codes?: Record<string, string>;
}
const POINTS: Point[] = [
  { name: 'before dispatch: both calls logged', kind: 'tool/call', callId: 't1.s1.c2', codes: { 't1.s1.c2': 'TOOL_NOT_STARTED' } },
  { name: 'during a tool', kind: 'tool/dispatch', callId: 't1.s1.c1', codes: { 't1.s1.c1': 'TOOL_OUTCOME_UNKNOWN', 't1.s1.c2': 'TOOL_NOT_STARTED' } },
  { name: 'after a result', kind: 'tool/result', callId: 't1.s1.c1' },
  { name: 'during the next tool of the same answer', kind: 'tool/dispatch', callId: 't1.s1.c2', codes: { 't1.s1.c2': 'TOOL_OUTCOME_UNKNOWN' } },
  { name: 'after the last result', kind: 'tool/result', callId: 't1.s2.c1' },
  { name: 'during a tool, with a torn last line', kind: 'tool/dispatch', callId: 't1.s1.c1', tear: true, codes: { 't1.s1.c1': 'TOOL_OUTCOME_UNKNOWN' } },
];

describe.skipIf(!cliBuilt).concurrent('crash and resume (SIGKILL at seeded points)', () => {
  POINTS.forEach((point, i) => {
    const seed = 7001 + i;
    it(`${point.name} (seed ${seed})`, async () => {
      const rng = seeded(seed);
      const w = createWorld();
      try {
        const common = ['--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'off'];
        const child = w.spawn(['run', 'do the work', '--model', `scripted:${w.script('work.json', WORK)}`, ...common]);
        await waitFor(() => logHas(w.log(), point.kind, point.callId) || child.proc.exitCode !== null, 15_000, `${point.kind} ${point.callId}`);
        await new Promise((r) => setTimeout(r, Math.floor(rng() * 30)));
        const acked = completeLines(w.log());
        child.proc.kill('SIGKILL');
        await child.exit;
        const logPath = w.logPath()!;
        if (point.tear) fs.appendFileSync(logPath, `{"seq":${acked.length + 1},"at":"2026-01-01T00:00:0`);

        const crashed = verifyFile(logPath).verdict;
        if (!crashed.ok) expect(crashed.violations.map((v) => v.violation).every((v) => v === 'open-turn' || v === 'torn-tail')).toBe(true);

        const resumed = w.spawn(['resume', logPath, '--continue', '--model', `scripted:${w.script('resume.json', { responses: [{ text: 'checked; carrying on' }] })}`, ...common]);
        const r = await resumed.exit;
        expect(r.code, resumed.stderr()).toBe(0);

        const final = w.log();
        // No acknowledged entry lost, none rewritten: what a reader saw before the kill is a prefix of the log.
        expect(completeLines(final).slice(0, acked.length)).toEqual(acked);
        const { verdict } = verifyFile(logPath);
        expect(verdict.violations).toEqual([]);
        const entries = parseLog(final).entries;
        // The resumed turn is the harness's note, and it ran to completion.
        expect(entries.filter((e) => e.kind === 'user/message').at(-1)).toMatchObject({ origin: 'resume' });
        expect(entries.filter((e) => e.kind === 'turn/end').at(-1)).toMatchObject({ reason: 'completed' });

        // Give a bash the kill orphaned time to write its marker, then count.
        await new Promise((r) => setTimeout(r, 50));
        const marks = w.marker();
        for (const label of new Set(marks)) {
          expect(marks.filter((m) => m === label), `${label} ran more than once`).toHaveLength(1);
          const dispatched = entries.filter((e): e is EntryOf<'tool/dispatch'> => e.kind === 'tool/dispatch' && e.callId === CALL_OF[label]);
          expect(dispatched, `${label} ran without a durable dispatch`).toHaveLength(1);
        }
        // Every call whose outcome the crash hid is marked unknown, never re-run or claimed.
        for (const res of entries.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.code === 'TOOL_OUTCOME_UNKNOWN')) {
          expect(entries.some((e) => e.kind === 'tool/dispatch' && e.callId === res.callId)).toBe(true);
        }
        for (const [callId, code] of Object.entries(point.codes ?? {})) {
          expect(entries.find((e) => e.kind === 'tool/result' && e.callId === callId)).toMatchObject({ code });
        }
        if (point.tear) expect(entries.some((e) => e.kind === 'repair' && e.found === 'torn-tail')).toBe(true);
      } finally {
        w.cleanup();
      }
    });
  });
});
