/**
 * The bwrap sandbox against real escape attempts (I11). These run bubblewrap
 * for real: without it they are skipped with a line saying how to install it,
 * except in CI (`.ci/run` installs and requires it), where they fail
 * (test/helpers/system-deps.ts).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandboxedShell, SANDBOX_UNAVAILABLE, type SandboxPolicy } from '../../actors/sandbox.js';
import { bashTool } from '../../tools/bash.js';
import { createTempWorkspace, type TempWorkspace } from '../../tools/testing.js';
import { ToolError, type Shell } from '../../tools/types.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../../test/helpers/system-deps.js';
import { bwrapArgv, createBwrapSandbox } from './bwrap.js';
import { createLocalShell } from './local.js';
import { createOffSandbox } from './off.js';

let tw: TempWorkspace;
/** Outside the workspace and not under /tmp, so the private /tmp cannot be what stops a write there. */
let far: string;
beforeEach(() => {
  tw = createTempWorkspace();
  far = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'bridle-far-')));
});
afterEach(() => {
  tw.cleanup();
  fs.rmSync(far, { recursive: true, force: true });
});

const policy = (over: Partial<SandboxPolicy> = {}): SandboxPolicy => ({ mode: 'workspace-write', workspace: tw.workspace, network: false, ...over });
const bash = async (shell: Shell, command: string) => bashTool.execute({ command, timeout_ms: 20_000 }, { ...tw.ctx, shell });
const confinedBy = (over: Partial<SandboxPolicy>, env: NodeJS.ProcessEnv) => createSandboxedShell(createLocalShell(), createBwrapSandbox({ env }), policy(over));

describe('bwrapArgv', () => {
  it('binds the workspace after the private /tmp, drops capabilities, and cuts the network unless allowed', () => {
    const a = bwrapArgv('/usr/bin/bwrap', ['bash', '-c', 'ls'], { mode: 'workspace-write', workspace: '/tmp/ws', network: false });
    expect(a.indexOf('--tmpfs')).toBeLessThan(a.indexOf('--bind'));
    expect(a.slice(a.indexOf('--bind'), a.indexOf('--bind') + 3)).toEqual(['--bind', '/tmp/ws', '/tmp/ws']);
    expect(a).toContain('--unshare-net');
    expect(a.join(' ')).toContain('--unshare-pid --cap-drop ALL --die-with-parent --new-session --chdir /tmp/ws -- bash -c ls');
    expect(bwrapArgv('bwrap', ['ls'], { mode: 'workspace-write', workspace: '/w', network: true })).not.toContain('--unshare-net');
    expect(bwrapArgv('bwrap', ['ls'], { mode: 'read-only', workspace: '/w', network: false }).join(' ')).toContain('--ro-bind /w /w');
  });
});

describe('when bwrap is missing or cannot start, commands fail closed', () => {
  it('confine throws SANDBOX_UNAVAILABLE when BRIDLE_BWRAP points at a missing file', () => {
    const sandbox = createBwrapSandbox({ env: { ...process.env, BRIDLE_BWRAP: path.join(tw.root, 'no-such-bwrap') } });
    let err: unknown;
    try {
      sandbox.confine(['true'], policy());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe(SANDBOX_UNAVAILABLE);
    expect((err as ToolError).message).toMatch(/install bubblewrap.*--sandbox off/i);
  });

  it('with no bwrap on PATH, a bash call gets a SANDBOX_UNAVAILABLE result and the command never runs', async () => {
    const out = await bash(confinedBy({}, { PATH: path.join(tw.root, 'empty-path') }), 'touch ran.txt');
    expect(out).toMatchObject({ status: 'error', code: SANDBOX_UNAVAILABLE });
    expect(fs.existsSync(path.join(tw.workspace, 'ran.txt'))).toBe(false);
  });

  it('a bwrap that cannot start fails as unavailable, and the real command never reaches it', async () => {
    const fake = path.join(tw.root, 'fake-bwrap');
    const seen = path.join(tw.root, 'argv.log');
    fs.writeFileSync(fake, `#!/bin/sh\necho "$*" >> ${seen}\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n`, { mode: 0o755 });
    const out = await bash(confinedBy({}, { ...process.env, BRIDLE_BWRAP: fake }), 'touch ran.txt');
    expect(out).toMatchObject({ status: 'error', code: SANDBOX_UNAVAILABLE });
    expect(out.content).toContain('No permissions to create a new namespace');
    const calls = fs.readFileSync(seen, 'utf8').trim().split('\n');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/ -- true$/);
    expect(fs.existsSync(path.join(tw.workspace, 'ran.txt'))).toBe(false);
  });

  it('off confines nothing, and says so', () => {
    const off = createOffSandbox();
    expect(off.confine(['ls'], policy())).toEqual(['ls']);
    expect(off.describe(policy())).toMatch(/unconfined/);
  });
});

describeWithSystemDep('escape attempts under bwrap', SYSTEM_DEPS.bwrap, (bwrap) => {
  // The bubblewrap the helper found is the one these run.
  const confined = (over: Partial<SandboxPolicy> = {}) => confinedBy(over, { ...process.env, BRIDLE_BWRAP: bwrap });

  it('writes in the workspace and /tmp work; writes anywhere else fail or stay private', async () => {
    const shell = confined();
    const ok = await bash(shell, 'echo in > inside.txt && echo tmp > /tmp/private.txt && cat /tmp/private.txt');
    expect(ok).toMatchObject({ status: 'ok' });
    expect(fs.readFileSync(path.join(tw.workspace, 'inside.txt'), 'utf8')).toBe('in\n');

    const far1 = await bash(shell, `echo x > ${far}/escaped.txt`);
    expect(far1.code).toBe('EXIT_NONZERO');
    expect(far1.content).toMatch(/Read-only file system/);
    await bash(shell, `echo x > ${tw.outside}/escaped.txt; mkdir -p ${tw.bridleHome}/x; echo x > /etc/bridle-escape`);
    expect(fs.readdirSync(far)).toEqual([]);
    expect(fs.readdirSync(tw.outside)).toEqual([]);
    expect(fs.readdirSync(tw.bridleHome)).toEqual([]);
    expect(fs.existsSync('/etc/bridle-escape')).toBe(false);
    expect(fs.existsSync(path.join(os.tmpdir(), 'private.txt'))).toBe(false);
  });

  it('a symlink that points out of the workspace does not carry a write out', async () => {
    fs.symlinkSync(far, path.join(tw.workspace, 'planted'));
    const shell = confined();
    const planted = await bash(shell, 'echo x > planted/through-planted.txt');
    const made = await bash(shell, `ln -s ${far} made && echo x > made/through-made.txt`);
    expect(planted.code).toBe('EXIT_NONZERO');
    expect(made.code).toBe('EXIT_NONZERO');
    expect(fs.readdirSync(far)).toEqual([]);
  });

  it('with the network off, a loopback connect is refused and the server sees nothing; allowed, it connects', async () => {
    let connections = 0;
    // The probe may reset the connection as it exits; that is not a failure of this test.
    const server = net.createServer((s) => (connections++, s.on('error', () => {}), s.end('hello\n')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
      const off = await bash(confined(), probe);
      expect(off.code).toBe('EXIT_NONZERO');
      expect(off.content).not.toContain('connected');
      expect(connections).toBe(0);
      const on = await bash(confined({ network: true }), probe);
      expect(on).toMatchObject({ status: 'ok' });
      expect(on.content).toContain('connected');
    } finally {
      server.close();
    }
  });

  it('holds when bridle runs as root: no remounting /, no reaching the host through /proc', async () => {
    const shell = confined();
    const remount = await bash(shell, `mount -o remount,rw / && echo x > ${far}/remounted.txt`);
    const viaProc = await bash(shell, `for p in /proc/[0-9]*; do echo x > $p/root${far}/via-proc.txt 2>/dev/null && echo "escaped via $p"; done; true`);
    expect(remount.code).toBe('EXIT_NONZERO');
    expect(viaProc.content).not.toContain('escaped');
    expect(fs.readdirSync(far)).toEqual([]);
  });

  it('read-only mode: not even the workspace is writable', async () => {
    const out = await bash(confined({ mode: 'read-only' }), 'echo x > inside.txt');
    expect(out.code).toBe('EXIT_NONZERO');
    expect(fs.existsSync(path.join(tw.workspace, 'inside.txt'))).toBe(false);
    expect(await bash(confined({ mode: 'read-only' }), 'ls')).toMatchObject({ status: 'ok' });
  });

  it('protected paths inside the workspace stay read-only', async () => {
    const inner = createTempWorkspace({ bridleHomeInside: true });
    try {
      const shell = createSandboxedShell(createLocalShell(), createBwrapSandbox({ env: { ...process.env, BRIDLE_BWRAP: bwrap } }), { mode: 'workspace-write', workspace: inner.workspace, network: false, protect: [inner.bridleHome] });
      const out = await bashTool.execute({ command: 'echo x > ok.txt && echo x > .bridle/forged.jsonl' }, { ...inner.ctx, shell });
      expect(out.code).toBe('EXIT_NONZERO');
      expect(fs.existsSync(path.join(inner.workspace, 'ok.txt'))).toBe(true);
      expect(fs.readdirSync(inner.bridleHome)).toEqual([]);
    } finally {
      inner.cleanup();
    }
  });

  it('leaves nothing running behind a command that backgrounds a process', async () => {
    const t0 = Date.now();
    const out = await bash(confined(), 'sleep 30 & echo started');
    expect(out).toMatchObject({ status: 'ok' });
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
