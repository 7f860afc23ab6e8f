/**
 * A crash during delegation: the real CLI runs `--max-depth 1`, the parent
 * delegates, the child's `grep` runs a catastrophic pattern (its worker's
 * deadline is 30 s away), and the process is
 * killed with SIGKILL while that call runs. Both logs are left open. `bridle
 * resume` of the parent must repair the child's log as well, so that every
 * log of the tree passes `bridle replay` (and replays through the machines).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliBuilt, createWorld, logHas, runToExit, waitFor, type World } from './cli-world.js';

const SCRIPT = {
  label: 'scripted: delegation killed mid-call (parent and child share this script, in request order)',
  responses: [
    { toolCalls: [{ name: 'delegate', arguments: { task: 'Read the file named slow.' } }] },
    { toolCalls: [{ name: 'grep', arguments: { pattern: '^(a+)+$', path: 'slow.txt' } }] },
    { text: 'never reached' },
  ],
};

const logs = (w: World) => {
  const dir = path.join(w.home, 'sessions');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length).map((f) => path.join(dir, f)) : [];
};
const text = (p: string | undefined) => (p && fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : '');

describe.skipIf(!cliBuilt)('a crash during delegate (SIGKILL in a child\'s tool call)', () => {
  it('child logs are repaired with their parent: after resume of the parent, every log of the tree passes bridle replay', async () => {
    const w = createWorld();
    try {
      fs.writeFileSync(path.join(w.workspace, 'slow.txt'), `${'a'.repeat(48)}b\n`);
      const run = w.spawn(['run', 'find out what slow says', '--model', `scripted:${w.script('s.json', SCRIPT)}`, '--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'off', '--max-depth', '1']);
      // The child's grep is dispatched (durably) and now backtracks: kill the whole process there.
      await waitFor(() => logs(w).length === 2 && logHas(text(logs(w)[1]), 'tool/dispatch', 't1.s1.c1') || run.proc.exitCode !== null, 20_000, "the child's grep dispatch");
      run.proc.kill('SIGKILL');
      await run.exit;
      const [parent, child] = logs(w);
      expect(parent && child, run.stderr()).toBeTruthy();
      expect(logHas(text(parent), 'subagent/start')).toBe(true);
      expect(logHas(text(parent), 'subagent/end')).toBe(false);
      // What the issue saw: the child's log keeps its open turn.
      expect((await runToExit(w, ['replay', child!])).out).toMatch(/repairable: open-turn/);

      const resumed = await runToExit(w, ['resume', parent!]);
      expect(resumed.code, resumed.out).toBe(0);
      expect(resumed.out).toMatch(/repaired: subagent \S+\.t1\.s1\.c1: turn t1 never ended; step t1\.s1 was open; outcome unknown: t1\.s1\.c1 \(grep\)/);

      for (const log of logs(w)) {
        const r = await runToExit(w, ['replay', log, '--machines']);
        expect(r.code, `${path.basename(log)}: ${r.out}`).toBe(0);
        expect(r.out).toMatch(/^ok: .* verifies/m);
        expect(r.out).toMatch(/^machines: replays byte for byte/m);
      }
      expect(text(parent)).toMatch(/"kind":"subagent\/end","callId":"t1\.s1\.c1","child":"[^"]+","reason":"interrupted"/);

      // Carrying on runs nothing twice: the delegation whose outcome is unknown is not re-run by the harness (no second child), nor is the child's call.
      const next = w.script('next.json', { label: 'scripted: the parent carries on after the crash', responses: [{ text: 'The subagent was interrupted; I will not ask it again.' }] });
      const carried = await runToExit(w, ['resume', parent!, '--continue', '--model', `scripted:${next}`, '--sandbox', 'off', '--max-depth', '1']);
      expect(carried.code, carried.out).toBe(0);
      const lines = (p: string) => text(p).trim().split('\n').map((l) => JSON.parse(l) as { kind: string; callId?: string; name?: string; status?: string; code?: string });
      const all = logs(w).flatMap((p) => lines(p).map((e) => ({ ...e, log: path.basename(p) })));
      expect(logs(w)).toHaveLength(2);
      expect(all.filter((e) => e.kind === 'subagent/start')).toHaveLength(1);
      const dispatched = (log: string, callId: string) => all.filter((e) => e.log === log && e.kind === 'tool/dispatch' && e.callId === callId).length;
      expect(dispatched(path.basename(parent!), 't1.s1.c1')).toBe(1);
      expect(dispatched(path.basename(child!), 't1.s1.c1')).toBe(1);
      expect(lines(parent!).find((e) => e.kind === 'tool/result' && e.callId === 't1.s1.c1')).toMatchObject({ name: 'delegate', status: 'unknown', code: 'TOOL_OUTCOME_UNKNOWN' });
      for (const log of logs(w)) expect((await runToExit(w, ['replay', log, '--machines'])).code).toBe(0);
    } finally {
      w.cleanup();
    }
  }, 60_000);
});
