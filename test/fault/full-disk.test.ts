/**
 * A full disk, for real (ADR 0017): `$BRIDLE_HOME` on a small tmpfs that a
 * tool fills mid-turn, or that is full before the session starts. The CLI
 * exits non-zero with one line saying the session could not be saved and
 * naming the system's error, never says the turn completed, and the file
 * edit the tool made stays; once there is room, `bridle resume` continues
 * from what was saved and the log replays byte for byte. Mounting needs
 * root (or CAP_SYS_ADMIN): where it is not permitted the tests are skipped,
 * and the output says so.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import { parseLog } from '../../log/parse.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { builtinTools } from '../../tools/index.js';
import { cliBuilt, createWorld, type World } from './cli-world.js';

/** Mounts a tmpfs of `size` at `dir`; the reason it could not, otherwise. */
function mountTmpfs(dir: string, size: string): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.error) return `mount: ${r.error.message}`;
  if (r.status !== 0) return `mount exited ${r.status}: ${(r.stderr || r.stdout).trim()}`;
  return undefined;
}
const unmount = (dir: string) => spawnSync('umount', [dir]).status === 0 || spawnSync('umount', ['-l', dir]).status === 0;

/** Whether this machine lets us mount: tried once, on a scratch directory. */
let cannotMount: string | undefined = 'not tried';
beforeAll(() => {
  if (!cliBuilt) return;
  const probe = fs.mkdtempSync('/tmp/bridle-mount-probe-');
  cannotMount = mountTmpfs(probe, '64k');
  if (!cannotMount) unmount(probe);
  fs.rmSync(probe, { recursive: true, force: true });
  if (cannotMount) console.warn(`SKIPPED: full-disk tests: mounting a tmpfs is not permitted here (${cannotMount})`);
});

const common = (ws: string) => ['--cwd', ws, '--approval', 'auto', '--sandbox', 'off'];
const FILL = 'cat /dev/zero > "$BRIDLE_HOME/fill" 2>/dev/null; true';

/** A world whose `$BRIDLE_HOME` is a fresh tmpfs, unmounted afterwards whatever happens. */
async function onSmallDisk(body: (w: World) => Promise<void>): Promise<void> {
  const w = createWorld();
  const reason = mountTmpfs(w.home, '256k');
  try {
    if (reason) throw new Error(`could not mount a tmpfs on ${w.home}: ${reason}`);
    await body(w);
  } finally {
    if (!reason) unmount(w.home);
    w.cleanup();
  }
}

describe.skipIf(!cliBuilt).sequential('a full disk under $BRIDLE_HOME (tmpfs)', () => {
  it('a tool fills the disk mid-turn: exit 1, one line naming ENOSPC, never "completed"; the edit stays; resume continues once there is room', async (ctx) => {
    if (cannotMount) return ctx.skip();
    await onSmallDisk(async (w) => {
      const script = w.script('fill.json', {
        label: 'scripted: fills the disk',
        responses: [
          { text: 'writing', toolCalls: [{ name: 'bash', arguments: { command: `echo effect > out.txt; ${FILL}` } }] },
          // Long enough that its entry cannot fit in the log's last page.
          { text: `done. ${'x'.repeat(20_000)}` },
        ],
      });
      const child = w.spawn(['run', 'edit and go on', '--model', `scripted:${script}`, ...common(w.workspace)]);
      let out = '';
      child.proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const r = await child.exit;
      const err = child.stderr();
      expect(r.code, err).toBe(1);
      const said = err.split('\n').filter((l) => l.includes('could not be saved'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^bridle: the session could not be saved \(LOG_APPEND_FAILED: .*ENOSPC: no space left on device/);
      expect(`${out}${err}`).not.toMatch(/ended: completed/);
      // The environment is independent of the log: the edit the tool made stays.
      expect(fs.readFileSync(path.join(w.workspace, 'out.txt'), 'utf8')).toBe('effect\n');
      // No lock is left behind, full disk or not.
      const log = w.logPath()!;
      expect(fs.existsSync(`${log}.lock`)).toBe(false);

      // Room again: resume starts from what was saved. (The same --model, rewritten: a process that starts after a
      // clean turn end leaves replay no mark to tell it by, so a new model name would show as a header replay cannot place.)
      fs.rmSync(path.join(w.home, 'fill'));
      w.script('fill.json', { responses: [{ text: 'checked the workspace' }] });
      const resumed = w.spawn(['resume', log, '--continue', ...common(w.workspace)]);
      expect((await resumed.exit).code, resumed.stderr()).toBe(0);
      expect(verifyFile(log).verdict.violations).toEqual([]);
      const entries = parseLog(fs.readFileSync(log, 'utf8')).entries;
      expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ turn: 't1', reason: expect.stringMatching(/^(error|interrupted)$/) });
      const replayed = await replayThroughMachines(entries, builtinTools());
      expect(replayed.identical, replayed.note).toBe(true);
    });
  });

  it('--json on a disk that fills: no turn/end line claims the turn completed', async (ctx) => {
    if (cannotMount) return ctx.skip();
    await onSmallDisk(async (w) => {
      const script = w.script('fill.json', {
        responses: [{ toolCalls: [{ name: 'bash', arguments: { command: FILL } }] }, { text: `done. ${'x'.repeat(20_000)}` }],
      });
      const child = w.spawn(['run', 'go', '--json', '--model', `scripted:${script}`, ...common(w.workspace)]);
      let out = '';
      child.proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      expect((await child.exit).code, child.stderr()).toBe(1);
      const ends = out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.kind === 'turn/end');
      expect(ends.every((e) => e.reason !== 'completed')).toBe(true);
    });
  });

  it('a disk full before the session starts: exit 1, one line naming ENOSPC, nothing left behind', async (ctx) => {
    if (cannotMount) return ctx.skip();
    await onSmallDisk(async (w) => {
      fs.mkdirSync(path.join(w.home, 'sessions'));
      spawnSync('sh', ['-c', `cat /dev/zero > '${path.join(w.home, 'fill')}'`]);
      const child = w.spawn(['run', 'hello', '--model', `scripted:${w.script('hi.json', { responses: [{ text: 'hi' }] })}`, ...common(w.workspace)]);
      const r = await child.exit;
      expect(r.code, child.stderr()).toBe(1);
      const err = child.stderr().trim().split('\n');
      expect(err.filter((l) => l.startsWith('bridle:'))).toEqual([expect.stringMatching(/^bridle: the session could not be saved \(ENOSPC\): .*no space left on device/)]);
      expect(child.stderr()).not.toMatch(/unexpected failure|completed/);
      expect(fs.readdirSync(path.join(w.home, 'sessions'))).toEqual([]);
    });
  });
});
