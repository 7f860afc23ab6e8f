/**
 * A Ralph run killed with SIGKILL — once while a round's child runs a
 * command, once while the `--verify` command checks a claim — and then
 * `bridle resume`d: every log of the run verifies, the run goes on at the
 * round (or the check) it was in, with a fresh child, and no command that
 * ran is run again by the harness.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { cliBuilt, createWorld, logHas, runToExit, waitFor, type World } from './cli-world.js';

const sessions = (w: World) => path.join(w.home, 'sessions');
const files = (w: World) => (fs.existsSync(sessions(w)) ? fs.readdirSync(sessions(w)).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length) : []);
const text = (w: World, f: string) => fs.readFileSync(path.join(sessions(w), f), 'utf8');
const entries = (w: World, f: string): Entry[] => parseLog(text(w, f)).entries;
const handoff = (status: string, summary: string) => ({ toolCalls: [{ name: 'handoff', arguments: { status, summary, evidence: summary } }] });

function checkAll(w: World) {
  for (const f of files(w)) expect(verifyLog(entries(w, f)).violations, f).toEqual([]);
}

// A round is a child under `never` (ADR 0052): its command runs only under the sandbox, so this one needs bubblewrap.
describeWithSystemDep('a Ralph run killed with SIGKILL mid-command, then resumed', SYSTEM_DEPS.bwrap, () => {
  it.skipIf(!cliBuilt)("killed while a round's child runs a command: resume repairs the child's log, runs the round again with a fresh child, and runs nothing twice", async () => {
    const w = createWorld();
    try {
      const first = w.script('first.json', {
        label: 'scripted: a round that starts a slow command',
        responses: [{ toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> count; sleep 30' } }] }, handoff('continue', 'never reached')],
      });
      const run = w.spawn(['ralph', 'write done into STATUS', '--rounds', '3', '--verify', 'grep -q done STATUS', '--model', `scripted:${first}`, '--cwd', w.workspace, '--approval', 'auto']);
      await waitFor(() => files(w).length === 2 && logHas(text(w, files(w)[1]!), 'tool/dispatch'), 20_000, "the round's bash dispatch");
      await waitFor(() => fs.existsSync(path.join(w.workspace, 'count')), 10_000, 'the command to start');
      run.proc.kill('SIGKILL');
      await run.exit;
      const [parent, round1] = files(w);
      const second = w.script('second.json', {
        label: 'scripted: the round again, as a fresh agent',
        responses: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'STATUS', content: 'done\n' } }] }, handoff('complete', 'STATUS says done'), { text: 'handed off' }],
      });
      const resumed = await runToExit(w, ['resume', path.join(sessions(w), parent!), '--model', `scripted:${second}`, '--approval', 'auto']);
      expect(resumed.code, resumed.out).toBe(0);
      expect(resumed.out).toMatch(/repaired: subagent \S+\.r1: turn t1 never ended; step t1\.s1 was open; outcome unknown: t1\.s1\.c1 \(bash\)/);
      expect(resumed.out).toContain('ralph: round 1 was interrupted; it runs again with a fresh child');
      expect(resumed.out).toContain('ralph: verified complete after round 1');
      checkAll(w);
      const run1 = entries(w, parent!);
      expect(run1.filter((e): e is EntryOf<'ralph/round'> => e.kind === 'ralph/round').map((e) => [e.round, e.attempt])).toEqual([
        [1, 1],
        [1, 2],
      ]);
      expect(run1.find((e) => e.kind === 'ralph/handoff')).toMatchObject({ round: 1, source: 'interrupted' });
      // The command that was running when the process died ran once: its outcome is unknown, and nothing re-ran it.
      expect(fs.readFileSync(path.join(w.workspace, 'count'), 'utf8')).toBe('ran\n');
      expect(entries(w, round1!).filter((e) => e.kind === 'tool/dispatch')).toHaveLength(1);
      expect(entries(w, round1!).find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'unknown', code: 'TOOL_OUTCOME_UNKNOWN' });
      for (const f of files(w)) {
        const rp = await runToExit(w, ['replay', path.join(sessions(w), f), '--machines']);
        expect(rp.code, `${f}: ${rp.out}`).toBe(0);
      }
    } finally {
      w.cleanup();
    }
  }, 90_000);
});

describe.skipIf(!cliBuilt)('a Ralph run killed with SIGKILL while it verifies, then resumed', () => {
  it('killed while the --verify command checks a claim: resume runs the check again and goes on from its verdict', async () => {
    const w = createWorld();
    try {
      fs.writeFileSync(path.join(w.workspace, '.slow-once'), '');
      const script = w.script('s.json', {
        label: 'scripted: one round that claims complete',
        responses: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'STATUS', content: 'done\n' } }] }, handoff('complete', 'STATUS says done'), { text: 'handed off' }],
      });
      // The check is slow the first time only (it removes its marker before it sleeps).
      const verify = 'if [ -f .slow-once ]; then rm .slow-once; sleep 30; fi; grep -q done STATUS && echo checked >> checks';
      const run = w.spawn(['ralph', 'write done into STATUS', '--rounds', '2', '--verify', verify, '--model', `scripted:${script}`, '--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'off']);
      await waitFor(() => files(w).length > 0 && logHas(text(w, files(w)[0]!), 'ralph/verify') && !fs.existsSync(path.join(w.workspace, '.slow-once')), 20_000, 'the check to start');
      run.proc.kill('SIGKILL');
      await run.exit;
      const [parent] = files(w);
      const resumed = await runToExit(w, ['resume', path.join(sessions(w), parent!), '--sandbox', 'off']);
      expect(resumed.code, resumed.out).toBe(0);
      expect(resumed.out).toContain('ralph: the check of round 1 (command) was interrupted; it runs again');
      expect(resumed.out).toContain('ralph: verified complete after round 1');
      checkAll(w);
      const log = entries(w, parent!);
      expect(log.filter((e) => e.kind === 'ralph/verdict').map((e) => [(e as EntryOf<'ralph/verdict'>).verified, (e as EntryOf<'ralph/verdict'>).code])).toEqual([
        [false, 'INTERRUPTED'],
        [true, undefined],
      ]);
      // One round, one child: the round that claimed complete did not run again.
      expect(log.filter((e) => e.kind === 'ralph/round')).toHaveLength(1);
      expect(fs.readFileSync(path.join(w.workspace, 'checks'), 'utf8')).toBe('checked\n');
      expect((await runToExit(w, ['replay', path.join(sessions(w), parent!), '--machines'])).code).toBe(0);
      // Resumed once more, an ended run says so and runs nothing.
      const again = await runToExit(w, ['resume', path.join(sessions(w), parent!), '--sandbox', 'off']);
      expect(again.code).toBe(0);
      expect(again.out).toContain('this run ended verified after round 1; there is nothing to continue');
    } finally {
      w.cleanup();
    }
  }, 90_000);
});
