/**
 * bridle killed (SIGKILL) while a sandboxed command and a process it put in
 * the background run: nothing of the command outlives bridle (bwrap dies
 * with its parent, and its PID namespace with it), and the per-command
 * cgroups the dead bridle left are removed by the next one.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cgroupDirs } from '../../adapters/sandbox/cgroup.js';
import { cliBuilt, createWorld, seeded, waitFor } from './cli-world.js';

/** Host pids whose command line is exactly `sleep <seconds>`. */
function sleepers(seconds: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8') === `sleep\0${seconds}\0`) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** The cgroups bridle process `pid` made, in this process's hierarchies (the CLI runs in the same ones). Looks, never sweeps. */
const leftovers = (pid: number) =>
  Object.values(cgroupDirs(fs.readFileSync('/proc/self/cgroup', 'utf8'), fs.readFileSync('/proc/self/mountinfo', 'utf8'))).flatMap((p) => {
    try {
      return fs.readdirSync(p.dir).filter((n) => n.startsWith(`bridle-${pid}-`));
    } catch {
      return [];
    }
  });

describe.skipIf(!cliBuilt || process.env.BRIDLE_TEST_NO_BWRAP === '1')('SIGKILL during a sandboxed command', () => {
  it('leaves no process of the command behind, and the next bridle removes the dead one’s cgroups (seed 7101)', async () => {
    const seconds = 3000 + Math.floor(seeded(7101)() * 900);
    const w = createWorld();
    try {
      const work = { responses: [{ toolCalls: [{ name: 'bash', arguments: { command: `sleep ${seconds} & sleep ${seconds} & echo started >> marker; sleep ${seconds}` } }] }, { text: 'never reached' }] };
      const child = w.spawn(['run', 'go', '--model', `scripted:${w.script('work.json', work)}`, '--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'bwrap']);
      await waitFor(() => w.marker().length > 0 || child.proc.exitCode !== null, 15_000, 'the command to start');
      await waitFor(() => sleepers(seconds).length === 3, 5_000, `three "sleep ${seconds}" running`);
      const dead = child.proc.pid!;
      child.proc.kill('SIGKILL');
      await child.exit;
      await waitFor(() => sleepers(seconds).length === 0, 5_000, `no "sleep ${seconds}" left`);
      // Where the sandbox made cgroups (the CLI said it limits memory), the dead bridle's are still there.
      if (child.stderr().includes('MiB memory')) expect(leftovers(dead).length).toBeGreaterThan(0);

      const resumed = w.spawn(['resume', w.logPath()!, '--continue', '--model', `scripted:${w.script('resume.json', { responses: [{ toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }, { text: 'ok' }] })}`, '--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'bwrap']);
      expect((await resumed.exit).code, resumed.stderr()).toBe(0);
      expect(leftovers(dead)).toEqual([]);
    } finally {
      for (const pid of sleepers(seconds)) process.kill(pid, 'SIGKILL');
      w.cleanup();
    }
  });
});
