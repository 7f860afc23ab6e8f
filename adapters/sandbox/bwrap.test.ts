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
import { resolveSandboxLimits, type SandboxPolicy } from '../../ports/sandbox.js';
import { SANDBOX_UNAVAILABLE } from '../../safety/sandbox.js';
import { bashTool } from '../../tools/bash.js';
import { createTempWorkspace, type TempWorkspace } from '../fs/testing.js';
import type { Subprocess } from '../../ports/subprocess.js';
import { ToolError } from '../../ports/tool-error.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../../test/helpers/system-deps.js';
import { bwrapArgv, commandIdentity, createBwrapSandbox, findBwrap, type BwrapSpec } from './bwrap.js';
import { createLocalSubprocess } from '../subprocess/local.js';
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
const bash = async (subprocess: Subprocess, command: string) => bashTool.execute({ command, timeout_ms: 20_000 }, { ...tw.ctx, subprocess });
const confinedBy = (over: Partial<SandboxPolicy>, env: NodeJS.ProcessEnv) => createLocalSubprocess({ sandbox: createBwrapSandbox({ env }), policy: policy(over) });

const spec = (over: Partial<BwrapSpec> = {}): BwrapSpec => ({
  bin: '/usr/bin/bwrap',
  features: new Set(['--size', '--disable-userns']),
  identity: { asRoot: false },
  prlimit: '/usr/bin/prlimit',
  hide: [],
  limits: resolveSandboxLimits(),
  ...over,
});

describe('bwrapArgv', () => {
  it('binds the workspace after the private /tmp, drops capabilities, and cuts the network unless allowed', () => {
    const a = bwrapArgv(spec(), ['bash', '-c', 'ls'], { mode: 'workspace-write', workspace: '/tmp/ws', network: false });
    expect(a.indexOf('--tmpfs')).toBeLessThan(a.indexOf('--bind'));
    expect(a.slice(a.indexOf('--bind'), a.indexOf('--bind') + 3)).toEqual(['--bind', '/tmp/ws', '/tmp/ws']);
    expect(a).toContain('--unshare-net');
    expect(a.join(' ')).toContain('--unshare-pid --cap-drop ALL --die-with-parent --new-session --chdir /tmp/ws --');
    expect(a.slice(-3)).toEqual(['bash', '-c', 'ls']);
    expect(bwrapArgv(spec(), ['ls'], { mode: 'workspace-write', workspace: '/w', network: true })).not.toContain('--unshare-net');
    expect(bwrapArgv(spec(), ['ls'], { mode: 'read-only', workspace: '/w', network: false }).join(' ')).toContain('--ro-bind /w /w');
  });

  it('puts kernel knobs read-only over the new /proc, and a user, IPC and UTS namespace around the command', () => {
    const a = bwrapArgv(spec(), ['ls'], { mode: 'workspace-write', workspace: '/w', network: false }).join(' ');
    expect(a).toMatch(/--proc \/proc .*--ro-bind-try \/proc\/sys \/proc\/sys .*--ro-bind-try \/proc\/sysrq-trigger \/proc\/sysrq-trigger/);
    expect(a).toContain('--unshare-user --disable-userns --unshare-ipc --unshare-uts');
    expect(bwrapArgv(spec({ identity: { asRoot: true } }), ['ls'], { mode: 'workspace-write', workspace: '/w', network: false }).join(' ')).toContain('--unshare-user --uid 0 --gid 0');
    // An old bwrap without --disable-userns still gets the rest.
    expect(bwrapArgv(spec({ features: new Set() }), ['ls'], { mode: 'workspace-write', workspace: '/w', network: false })).not.toContain('--disable-userns');
    // full mode writes anywhere, but never /sys.
    expect(bwrapArgv(spec(), ['ls'], { mode: 'full', workspace: '/w', network: false }).join(' ')).toContain('--bind / / --ro-bind /sys /sys');
  });

  it('sizes the private /tmp and /dev/shm, and limits processes through prlimit unless the command runs as root', () => {
    const limits = { processes: 64, memoryMb: 256, tmpMb: 8 };
    const a = bwrapArgv(spec({ limits }), ['ls'], { mode: 'workspace-write', workspace: '/w', network: false });
    expect(a.join(' ')).toContain(`--size ${8 * 1024 * 1024} --tmpfs /dev/shm`);
    expect(a.join(' ')).toContain(`--size ${8 * 1024 * 1024} --tmpfs /tmp`);
    expect(a.slice(-4)).toEqual(['/usr/bin/prlimit', '--nproc=64:64', '--', 'ls']);
    expect(bwrapArgv(spec({ limits, identity: { asRoot: true } }), ['ls'], { mode: 'workspace-write', workspace: '/w', network: false })).not.toContain('/usr/bin/prlimit');
  });
});

describe('commandIdentity', () => {
  it('as root, runs commands as the workspace owner; keeps root only for a workspace root owns', () => {
    expect(commandIdentity(1000, { uid: 1000, gid: 1000 })).toEqual({ asRoot: false });
    expect(commandIdentity(0, { uid: 1000, gid: 100 })).toEqual({ asRoot: false, runAs: { uid: 1000, gid: 100 } });
    expect(commandIdentity(0, { uid: 1000, gid: 0 })).toEqual({ asRoot: false, runAs: { uid: 1000, gid: 65534 } });
    expect(commandIdentity(0, { uid: 0, gid: 0 })).toEqual({ asRoot: true });
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
    // Its --help is read once (what options it knows); then only the probe ran.
    const calls = fs.readFileSync(seen, 'utf8').trim().split('\n').filter((c) => c !== '--help');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/ -- true$/);
    expect(fs.existsSync(path.join(tw.workspace, 'ran.txt'))).toBe(false);
  });

  it('off confines nothing, and says so', () => {
    const off = createOffSandbox();
    expect(off.confine(['ls'], policy()).argv).toEqual(['ls']);
    expect(off.describe(policy())).toMatch(/unconfined/);
  });
});

describeWithSystemDep('escape attempts under bwrap', SYSTEM_DEPS.bwrap, (bwrap) => {
  // The bubblewrap the helper found is the one these run.
  const confined = (over: Partial<SandboxPolicy> = {}, env: NodeJS.ProcessEnv = { ...process.env, BRIDLE_BWRAP: bwrap }) => confinedBy(over, env);

  it('writes in the workspace and /tmp work; writes anywhere else fail or stay private', async () => {
    const sub = confined();
    const ok = await bash(sub, 'echo in > inside.txt && echo tmp > /tmp/private.txt && cat /tmp/private.txt');
    expect(ok).toMatchObject({ status: 'ok' });
    expect(fs.readFileSync(path.join(tw.workspace, 'inside.txt'), 'utf8')).toBe('in\n');

    const far1 = await bash(sub, `echo x > ${far}/escaped.txt`);
    expect(far1.code).toBe('EXIT_NONZERO');
    expect(far1.content).toMatch(/Read-only file system/);
    await bash(sub, `echo x > ${tw.outside}/escaped.txt; mkdir -p ${tw.bridleHome}/x; echo x > /etc/bridle-escape`);
    expect(fs.readdirSync(far)).toEqual([]);
    expect(fs.readdirSync(tw.outside)).toEqual([]);
    expect(fs.readdirSync(tw.bridleHome)).toEqual([]);
    expect(fs.existsSync('/etc/bridle-escape')).toBe(false);
    expect(fs.existsSync(path.join(os.tmpdir(), 'private.txt'))).toBe(false);
  });

  it('a symlink that points out of the workspace does not carry a write out', async () => {
    fs.symlinkSync(far, path.join(tw.workspace, 'planted'));
    const sub = confined();
    const planted = await bash(sub, 'echo x > planted/through-planted.txt');
    const made = await bash(sub, `ln -s ${far} made && echo x > made/through-made.txt`);
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
    const sub = confined();
    const remount = await bash(sub, `mount -o remount,rw / && echo x > ${far}/remounted.txt`);
    const viaProc = await bash(sub, `for p in /proc/[0-9]*; do echo x > $p/root${far}/via-proc.txt 2>/dev/null && echo "escaped via $p"; done; true`);
    expect(remount.code).toBe('EXIT_NONZERO');
    expect(viaProc.content).not.toContain('escaped');
    expect(fs.readdirSync(far)).toEqual([]);
  });

  it('a command cannot write host sysctls (kernel.core_pattern), /proc/sysrq-trigger or /sys, even when bridle runs as root', async () => {
    // If a write got through it would write back the value it read: nothing on this host changes.
    const out = await bash(confined(), [
      'v=$(cat /proc/sys/kernel/core_pattern); printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern && echo "WROTE core_pattern"',
      'v=$(cat /proc/sys/kernel/hostname); printf "%s\\n" "$v" > /proc/sys/kernel/hostname && echo "WROTE hostname"',
      'for f in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sysrq-trigger /sys/kernel/uevent_helper /sys/power/state; do [ -e $f ] && [ -w $f ] && echo "WRITABLE $f"; done',
      'touch /sys/bridle-probe && echo "WROTE /sys"',
      'true',
    ].join('\n'));
    expect(out).toMatchObject({ status: 'ok' });
    expect(out.content).not.toMatch(/WROTE|WRITABLE/);
  });

  it('commands run in their own user, IPC and UTS namespaces, with no way to make another user namespace', async () => {
    const out = await bash(confined(), 'cat /proc/self/uid_map; readlink /proc/self/ns/user /proc/self/ns/ipc /proc/self/ns/uts; unshare -U true 2>/dev/null && echo NESTED-USERNS; true');
    expect(out).toMatchObject({ status: 'ok' });
    const [map, user, ipc, uts] = out.content.split('--- stdout ---\n')[1]!.trim().split('\n');
    expect(map!.trim().split(/\s+/)[2]).toBe('1');
    expect(user).not.toBe(fs.readlinkSync('/proc/self/ns/user'));
    expect(ipc).not.toBe(fs.readlinkSync('/proc/self/ns/ipc'));
    expect(uts).not.toBe(fs.readlinkSync('/proc/self/ns/uts'));
    expect(out.content).not.toContain('NESTED-USERNS');
  });

  it('a bwrap planted in the workspace (node_modules/.bin first on PATH) never replaces the real one', async () => {
    // Found on PATH, as bwrap is by default: the planted shim comes first there.
    const { BRIDLE_BWRAP: _forced, ...rest } = process.env;
    const env = { ...rest, PATH: `${tw.workspace}/node_modules/.bin:${path.dirname(bwrap)}:${process.env.PATH ?? ''}` };
    const sub = confined({}, env);
    const shim = '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\n';
    const plant = await bash(sub, `mkdir -p node_modules/.bin && printf '${shim}' > node_modules/.bin/bwrap && chmod +x node_modules/.bin/bwrap`);
    expect(plant).toMatchObject({ status: 'ok' });
    expect(fs.existsSync(path.join(tw.workspace, 'node_modules/.bin/bwrap'))).toBe(true);
    // The same session's next call, and a session opened after the plant (the shim already first on PATH).
    for (const next of [sub, confined({}, env)]) {
      const escape = await bash(next, `echo x > ${far}/escaped.txt`);
      expect(escape.code).toBe('EXIT_NONZERO');
    }
    expect(fs.readdirSync(far)).toEqual([]);
  });

  it('a fork bomb stops at the process limit, and the result names the limit', async () => {
    // Bounded even if no limit held: at most 400 sleeps, and the call's end kills them all.
    const sub = confined({ limits: { processes: 64, memoryMb: 4096, tmpMb: 64 } });
    const out = await bash(sub, [
      "sh -c 'i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); echo $i > /tmp/n; done'",
      's=$?; kill -9 -1 2>/dev/null; read n < /tmp/n; echo "started $n"; exit $s',
    ].join('\n'));
    const started = Number(/started (\d+)/.exec(out.content)?.[1]);
    expect(started).toBeGreaterThan(10);
    expect(started).toBeLessThan(64);
    expect(out.code).toBe('SANDBOX_LIMIT');
    expect(out.content).toMatch(/sandbox limit hit — processes: the sandbox allows 64 at once/);
  });

  it('the private /tmp and /dev/shm hold at most tmpMb, and the result names the limit', async () => {
    const sub = confined({ limits: { processes: 512, memoryMb: 4096, tmpMb: 4 } });
    for (const dir of ['/tmp', '/dev/shm']) {
      const out = await bash(sub, `head -c 16m /dev/zero > ${dir}/big`);
      expect(out.code, dir).toBe('SANDBOX_LIMIT');
      expect(out.content).toMatch(/sandbox limit hit — tmp: .*hold 4 MiB each/);
    }
    expect(await bash(sub, 'head -c 16m /dev/zero > big && rm big')).toMatchObject({ status: 'ok' });
  });

  it('memory is limited where bridle can make a cgroup, and the result names the limit', async () => {
    const limits = { processes: 512, memoryMb: 64, tmpMb: 64 };
    const line = createBwrapSandbox().describe(policy({ limits }));
    if (!line.includes('64 MiB memory')) {
      // No writable cgroup on this host: the sandbox must say it cannot limit memory, not pretend.
      expect(line).toContain('memory unlimited');
      return;
    }
    // Bounded: 300 MiB at most, even if the limit failed.
    const out = await bash(confined({ limits }), 'head -c 300m /dev/zero | tail > /dev/null');
    expect(out.code).toBe('SANDBOX_LIMIT');
    expect(out.content).toMatch(/sandbox limit hit — memory: the sandbox allows 64 MiB/);
  });

  it('in a workspace bridle (as root) does not own, commands run as its owner: what they create is theirs', async () => {
    const root = process.geteuid?.() === 0;
    if (root) {
      fs.chmodSync(tw.root, 0o755);
      fs.chownSync(tw.workspace, 65534, 65534);
    }
    const owner = fs.statSync(tw.workspace).uid;
    // bridle's home where only root can reach it (as /root/.bridle): hiding it must not stop the sandbox from starting.
    const rootOnly = path.join(far, 'root-only');
    fs.mkdirSync(path.join(rootOnly, '.bridle'), { recursive: true, mode: 0o700 });
    fs.chmodSync(rootOnly, 0o700);
    const out = await bash(confined({ limits: { processes: 32, memoryMb: 4096, tmpMb: 64 }, hide: [path.join(rootOnly, '.bridle'), tw.bridleHome] }), [
      'id -u; echo x > made.txt',
      'v=$(cat /proc/sys/kernel/core_pattern); printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern && echo "WROTE core_pattern"',
      "sh -c 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done'; kill -9 -1 2>/dev/null; true",
    ].join('\n'));
    expect(out.content).toMatch(new RegExp(`--- stdout ---\\n${owner}\\n`));
    expect(fs.statSync(path.join(tw.workspace, 'made.txt')).uid).toBe(owner);
    expect(out.content).not.toContain('WROTE');
    expect(out.content).toMatch(/sandbox limit hit — processes: the sandbox allows 32 at once/);
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
      const sub = createLocalSubprocess({ sandbox: createBwrapSandbox({ env: { ...process.env, BRIDLE_BWRAP: bwrap } }), policy: { mode: 'workspace-write', workspace: inner.workspace, network: false, protect: [inner.bridleHome] } });
      const out = await bashTool.execute({ command: 'echo x > ok.txt && echo x > .bridle/forged.jsonl' }, { ...inner.ctx, subprocess: sub });
      expect(out.code).toBe('EXIT_NONZERO');
      expect(fs.existsSync(path.join(inner.workspace, 'ok.txt'))).toBe(true);
      expect(fs.readdirSync(inner.bridleHome)).toEqual([]);
    } finally {
      inner.cleanup();
    }
  });

  it('every nested .git is read-only (only the workspace\'s own was: a vendored checkout\'s config or hooks could be planted), a .git link\'s target too', async () => {
    tw.write({ 'vendor/x/.git/config': '[core]\n', 'deep/a/b/pkg/.git': 'gitdir: ../real\n', 'notgit/HEAD': 'ref\n', 'plain/file.txt': 'p' });
    fs.symlinkSync('../notgit', path.join(tw.workspace, 'plain/.git'));
    const out = await bash(
      confined({ protectGit: true }),
      'echo x > vendor/x/.git/config; mkdir vendor/x/.git/hooks; echo x > deep/a/b/pkg/.git; echo x > notgit/HEAD; echo x > ok.txt',
    );
    expect(out.content).toContain('Read-only file system');
    expect(tw.read(path.join(tw.workspace, 'vendor/x/.git/config'))).toBe('[core]\n');
    expect(fs.existsSync(path.join(tw.workspace, 'vendor/x/.git/hooks'))).toBe(false);
    expect(tw.read(path.join(tw.workspace, 'deep/a/b/pkg/.git'))).toBe('gitdir: ../real\n');
    expect(tw.read(path.join(tw.workspace, 'notgit/HEAD'))).toBe('ref\n');
    expect(tw.read(path.join(tw.workspace, 'ok.txt'))).toBe('x\n');
    // With git writes allowed, the same command writes them.
    expect(await bash(confined({ protectGit: false }), 'echo y > vendor/x/.git/config')).toMatchObject({ status: 'ok' });
  });

  it('a repository a command cloned is read-only to the next command (the walk runs per command)', async () => {
    expect(await bash(confined({ protectGit: true }), 'mkdir -p sub/.git && echo a > sub/.git/config')).toMatchObject({ status: 'ok' });
    expect((await bash(confined({ protectGit: true }), 'echo b > sub/.git/config')).code).toBe('EXIT_NONZERO');
    expect(tw.read(path.join(tw.workspace, 'sub/.git/config'))).toBe('a\n');
  });

  it("hidden directories (bridle's homes) look empty to a command, which cannot write there either", async () => {
    // Outside /tmp and outside the workspace, so only the hiding can stop the read; and one inside the workspace.
    const inner = createTempWorkspace({ bridleHomeInside: true });
    const outer = path.join(far, 'dot-bridle');
    try {
      for (const home of [outer, inner.bridleHome]) {
        fs.mkdirSync(path.join(home, 'sessions'), { recursive: true });
        fs.writeFileSync(path.join(home, 'sessions', 's.jsonl'), 'the secret log\n');
      }
      const sub = createLocalSubprocess({ sandbox: createBwrapSandbox(), policy: { mode: 'workspace-write', workspace: inner.workspace, network: false, hide: [outer, inner.bridleHome] } });
      const out = await bashTool.execute({ command: `ls -A ${outer} .bridle; cat ${outer}/sessions/s.jsonl .bridle/sessions/s.jsonl; echo x > .bridle/forged; echo x > ${outer}/forged; echo x > ok.txt` }, { ...inner.ctx, subprocess: sub });
      expect(out.content).not.toContain('secret');
      // What ls listed (stdout): neither home shows its sessions directory.
      expect(out.content.split('--- stderr ---')[0]).not.toContain('sessions');
      expect(fs.existsSync(path.join(inner.workspace, 'ok.txt'))).toBe(true);
      expect(fs.readdirSync(outer)).toEqual(['sessions']);
      expect(fs.readdirSync(inner.bridleHome)).toEqual(['sessions']);
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
