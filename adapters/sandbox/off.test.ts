/**
 * `--sandbox off` confines nothing, but a call still owns what it starts:
 * when it ends, everything it left running ends too (the bash tool promises
 * it), and the call does not wait on a straggler holding its output open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../tools/bash.js';
import { createTempWorkspace, type TempWorkspace } from '../fs/testing.js';
import { createLocalSubprocess } from '../subprocess/local.js';
import { createOffSandbox } from './off.js';

let tw: TempWorkspace;
const started: number[] = [];
beforeEach(() => {
  tw = createTempWorkspace();
});
afterEach(() => {
  // Whatever the outcome, nothing a test started outlives it.
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  tw.cleanup();
});

/** Dead, or a zombie waiting for a reaper. */
function isGone(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && !isGone(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return isGone(pid);
}

const off = () => createLocalSubprocess({ sandbox: createOffSandbox(), policy: { mode: 'workspace-write', workspace: tw.workspace, network: false } });
const pidsIn = (...names: string[]) => names.map((n) => Number(fs.readFileSync(path.join(tw.workspace, n), 'utf8')));

describe('--sandbox off: a call ends what it started', () => {
  it('a background sleep 1000 is gone once the call has ended', async () => {
    const out = await bashTool.execute({ command: 'sleep 1000 & echo $! > p1; echo started', timeout_ms: 20_000 }, { ...tw.ctx, subprocess: off() });
    const [p1] = pidsIn('p1');
    started.push(p1!);
    expect(out).toMatchObject({ status: 'ok' });
    expect(await waitGone(p1!)).toBe(true);
  });

  it('so are a job-control group (set -m) and a setsid daemon, both holding the output open; the call does not wait for them', async () => {
    const t0 = Date.now();
    const command = ["setsid sh -c 'echo $$ > p3; exec sleep 1003' &", 'set -m', 'sleep 1002 & echo $! > p2', 'while [ ! -s p3 ]; do sleep 0.05; done', 'echo started'].join('\n');
    const out = await bashTool.execute({ command, timeout_ms: 20_000 }, { ...tw.ctx, subprocess: off() });
    const pids = pidsIn('p2', 'p3');
    started.push(...pids);
    expect(out).toMatchObject({ status: 'ok' });
    expect(out.content).toContain('started');
    expect(Date.now() - t0).toBeLessThan(10_000);
    for (const pid of pids) expect(await waitGone(pid), `pid ${pid}`).toBe(true);
  });

  it('a process that escapes every kill (own session, environment wiped) does not keep the call waiting on its output', async () => {
    const t0 = Date.now();
    const command = "setsid env -i sh -c 'echo $$ > p4; exec sleep 1004' & while [ ! -s p4 ]; do sleep 0.05; done; echo started";
    const out = await bashTool.execute({ command, timeout_ms: 20_000 }, { ...tw.ctx, subprocess: off() });
    started.push(...pidsIn('p4'));
    expect(out).toMatchObject({ status: 'ok' });
    expect(out.content).toContain('started');
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
