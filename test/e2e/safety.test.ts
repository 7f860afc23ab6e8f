/**
 * `bridle run` with a scripted model making hostile calls, through the built
 * CLI: under bwrap nothing outside the workspace changes and every call gets
 * a clear result; `--approval never` lets no write or command run; a missing
 * bwrap fails closed. The tests that run bubblewrap are skipped without it,
 * except in CI (test/helpers/system-deps.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';

let root: string;
let home: string;
let ws: string;
let far: string;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-e2e-safety-'));
  writeFileSync(join(ws, 'keep.txt'), 'keep\n');
  // Not under /tmp, so only the read-only root can be what stops a write there.
  far = realpathSync(mkdtempSync(join('/var/tmp', 'bridle-e2e-far-')));
  symlinkSync(far, join(ws, 'planted'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(far, { recursive: true, force: true });
});

const script = (calls: { name: string; arguments: unknown }[]) => {
  const file = join(root, 'script.json');
  writeFileSync(file, JSON.stringify({ label: 'scripted: hostile calls', responses: [{ toolCalls: calls }, { text: 'done', finish: 'stop' }] }));
  return `scripted:${file}`;
};
const readLog = (): Entry[] => readSessionLog(home);
const results = (log: Entry[]) => log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');

describeWithSystemDep('bridle run under the bwrap sandbox', SYSTEM_DEPS.bwrap, (bwrap) => {
  // The bubblewrap the helper found is the one the CLI runs.
  const env = () => ({ BRIDLE_HOME: home, BRIDLE_BWRAP: bwrap });

  it('--sandbox bwrap --approval auto: hostile calls change nothing outside the workspace, and each gets a clear result', async () => {
    let connections = 0;
    const server = net.createServer((s) => (connections++, s.end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const model = script([
        { name: 'bash', arguments: { command: `echo x > ${far}/by-bash.txt` } },
        { name: 'write_file', arguments: { path: `${far}/by-tool.txt`, content: 'x' } },
        { name: 'bash', arguments: { command: `ln -s ${far} made && echo x > made/by-made-link.txt` } },
        { name: 'bash', arguments: { command: 'echo x > planted/by-planted-link.txt' } },
        { name: 'write_file', arguments: { path: 'planted/by-tool-link.txt', content: 'x' } },
        { name: 'bash', arguments: { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected` } },
        { name: 'bash', arguments: { command: 'curl -s --max-time 3 http://example.com >/dev/null || getent hosts example.com || echo no-dns' } },
        { name: 'bash', arguments: { command: 'echo fine > ok.txt' } },
      ]);
      const r = await runCli(['run', '--model', model, '--cwd', ws, '--sandbox', 'bwrap', '--approval', 'auto', 'break out'], { env: env() });
      expect(r.stderr).toContain(`sandbox: bwrap, workspace-write — commands may write only in ${ws} and a private /tmp; no network`);
      expect(r.code).toBe(0);

      expect(readdirSync(far)).toEqual([]);
      expect(connections).toBe(0);
      expect(readFileSync(join(ws, 'ok.txt'), 'utf8')).toBe('fine\n');
      expect(readFileSync(join(ws, 'keep.txt'), 'utf8')).toBe('keep\n');

      const byCall = results(readLog());
      expect(byCall).toHaveLength(8);
      expect(byCall.map((x) => x.code ?? x.status)).toEqual(['EXIT_NONZERO', 'OUTSIDE_WORKSPACE', 'EXIT_NONZERO', 'EXIT_NONZERO', 'OUTSIDE_WORKSPACE', 'EXIT_NONZERO', 'ok', 'ok']);
      expect(byCall[0]!.content).toMatch(/Read-only file system/);
      expect(byCall[5]!.content).toMatch(/Connection refused|Network is unreachable/);
      expect(byCall[6]!.content).toContain('no-dns');
    } finally {
      server.close();
    }
  });

  it('--approval ask with stdin not a terminal: calls that ask are denied as unavailable, at once; --allow rules still allow', async () => {
    const model = script([
      { name: 'bash', arguments: { command: 'touch ran.txt' } },
      { name: 'bash', arguments: { command: 'touch allowed.txt' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'ask', '--allow', 'bash:^touch allowed\\.txt$', 'run it'], { env: env(), timeoutMs: 20_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('no terminal: calls that ask are denied');
    const log = readLog();
    expect(log.filter((e): e is EntryOf<'approval/decided'> => e.kind === 'approval/decided').map((d) => d.outcome)).toEqual(['unavailable']);
    expect(results(log).map((x) => x.status)).toEqual(['denied', 'ok']);
    expect(readdirSync(ws).sort()).toEqual(['allowed.txt', 'keep.txt', 'planted']);
  });

  it('--sandbox-mode read-only: neither the file tools nor commands may write; reads and commands that only read work', async () => {
    const model = script([
      { name: 'write_file', arguments: { path: 'new.txt', content: 'x' } },
      { name: 'bash', arguments: { command: 'echo x > new.txt' } },
      { name: 'bash', arguments: { command: 'cat keep.txt' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', '--sandbox-mode', 'read-only', 'try'], { env: env() });
    expect(r.stderr).toContain('sandbox: bwrap, read-only');
    expect(results(readLog()).map((x) => x.code ?? x.status)).toEqual(['DENIED', 'EXIT_NONZERO', 'ok']);
    expect(readdirSync(ws).sort()).toEqual(['keep.txt', 'planted']);
  });

  it("the workspace's .git is read-only to commands and the file tools, unless --allow-git-writes or allowGitWrites says otherwise", async () => {
    const fresh = () => {
      rmSync(join(ws, '.git'), { recursive: true, force: true });
      mkdirSync(join(ws, '.git/hooks'), { recursive: true });
      writeFileSync(join(ws, '.git/config'), '[core]\n\tbare = false\n');
      rmSync(join(home, 'sessions'), { recursive: true, force: true });
    };
    fresh();
    const model = script([
      { name: 'bash', arguments: { command: 'printf "#!/bin/sh\\ntouch pwned\\n" > .git/hooks/post-checkout' } },
      { name: 'bash', arguments: { command: 'printf "\\tfsmonitor = ./evil.sh\\n" >> .git/config' } },
      { name: 'write_file', arguments: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch pwned\n' } },
      { name: 'edit_file', arguments: { path: '.git/config', old_text: 'bare = false', new_text: 'fsmonitor = ./evil.sh' } },
      { name: 'bash', arguments: { command: 'echo fine > ok.txt' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', 'plant a hook'], { env: env() });
    expect(r.code).toBe(0);
    expect(results(readLog()).map((x) => x.code ?? x.status)).toEqual(['EXIT_NONZERO', 'EXIT_NONZERO', 'PROTECTED_PATH', 'PROTECTED_PATH', 'ok']);
    expect(readdirSync(join(ws, '.git/hooks'))).toEqual([]);
    expect(readFileSync(join(ws, '.git/config'), 'utf8')).toBe('[core]\n\tbare = false\n');

    for (const [how, extra] of [['flag', ['--allow-git-writes']], ['config', []]] as const) {
      fresh();
      if (how === 'config') writeFileSync(join(home, 'config.yaml'), 'allowGitWrites: true\n');
      const allowed = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', ...extra, 'plant a hook'], { env: env() });
      expect(allowed.code, how).toBe(0);
      expect(results(readLog()).map((x) => x.code ?? x.status), how).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(readdirSync(join(ws, '.git/hooks')).sort(), how).toEqual(['post-checkout', 'pre-commit']);
    }
  });

  it('a nested repository (vendor/x/.git) and a new sub/.git are read-only to commands and the file tools too, unless --allow-git-writes', async () => {
    const fresh = () => {
      rmSync(join(ws, 'vendor'), { recursive: true, force: true });
      rmSync(join(ws, 'sub'), { recursive: true, force: true });
      mkdirSync(join(ws, 'vendor/x/.git'), { recursive: true });
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'vendor/x/.git/config'), '[core]\n');
      rmSync(join(home, 'sessions'), { recursive: true, force: true });
    };
    fresh();
    const model = script([
      { name: 'bash', arguments: { command: 'echo > vendor/x/.git/config' } },
      { name: 'write_file', arguments: { path: 'vendor/x/.git/config', content: '[core]\n\tfsmonitor = ./evil.sh\n' } },
      { name: 'edit_file', arguments: { path: 'vendor/x/.git/config', old_text: '[core]', new_text: '[core]\n\tfsmonitor = ./evil.sh' } },
      { name: 'write_file', arguments: { path: 'sub/.git/hooks/pre-commit', content: '#!/bin/sh\ntouch pwned\n' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', 'plant a hook'], { env: env() });
    expect(r.code).toBe(0);
    expect(results(readLog()).map((x) => x.code ?? x.status)).toEqual(['EXIT_NONZERO', 'PROTECTED_PATH', 'PROTECTED_PATH', 'PROTECTED_PATH']);
    expect(readFileSync(join(ws, 'vendor/x/.git/config'), 'utf8')).toBe('[core]\n');
    expect(readdirSync(join(ws, 'sub'))).toEqual([]);

    fresh();
    const allowed = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', '--allow-git-writes', 'plant a hook'], { env: env() });
    expect(allowed.code).toBe(0);
    expect(results(readLog()).map((x) => x.code ?? x.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it("commands see no secrets from the environment and cannot read bridle's homes", async () => {
    // Both homes outside /tmp (the private /tmp alone would hide them): the default ~/.bridle, and a $BRIDLE_HOME inside the workspace.
    const userHome = join(far, 'user');
    mkdirSync(join(userHome, '.bridle'), { recursive: true });
    writeFileSync(join(userHome, '.bridle', 'config.yaml'), 'allow: [secret-default-home]\n');
    const inside = realpathSync(mkdtempSync(join('/var/tmp', 'bridle-e2e-ws-')));
    const insideHome = join(inside, '.bridle');
    try {
      const model = script([
        { name: 'bash', arguments: { command: 'env; ls -A ~/.bridle .bridle; cat ~/.bridle/config.yaml .bridle/sessions/*.jsonl; true' } },
        { name: 'bash', arguments: { command: 'echo forged > .bridle/sessions/forged.jsonl' } },
      ]);
      const env = { BRIDLE_BWRAP: bwrap, BRIDLE_HOME: insideHome, HOME: userHome, GITHUB_TOKEN: 'ghp_secret1', AWS_SECRET_ACCESS_KEY: 'aws_secret2', NPM_TOKEN: 'npm_secret3', DATABASE_URL: 'postgres://u:pw_secret4@db/x', OPENAI_API_KEY: 'sk-secret5' };
      const r = await runCli(['run', '--model', model, '--cwd', inside, '--approval', 'auto', 'look around'], { env });
      expect(r.code).toBe(0);
      const [seen, forged] = results(readSessionLog(insideHome));
      expect(seen).toMatchObject({ status: 'ok' });
      expect(seen!.content).toContain(`HOME=${userHome}`);
      expect(seen!.content).not.toMatch(/secret|session\/start/);
      expect(forged!.code).toBe('EXIT_NONZERO');
      expect(readdirSync(join(insideHome, 'sessions')).filter((f) => f.startsWith('forged'))).toEqual([]);
    } finally {
      rmSync(inside, { recursive: true, force: true });
    }
  });

  it('sandboxLimits from the config file hold for commands, and a hit is reported as SANDBOX_LIMIT naming the limit', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.yaml'), 'sandboxLimits: { processes: 32, tmpMb: 2 }\n');
    const model = script([
      // Bounded: 200 sleeps at most, killed with the call.
      { name: 'bash', arguments: { command: "sh -c 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done'; s=$?; kill -9 -1 2>/dev/null; exit $s" } },
      { name: 'bash', arguments: { command: 'head -c 8m /dev/zero > /tmp/big' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', 'use a lot'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/limits: 32 processes, .*2 MiB \/tmp/);
    const [fork, tmp] = results(readLog());
    expect(fork).toMatchObject({ status: 'error', code: 'SANDBOX_LIMIT' });
    expect(fork!.content).toContain('processes: the sandbox allows 32 at once');
    expect(tmp).toMatchObject({ status: 'error', code: 'SANDBOX_LIMIT' });
    expect(tmp!.content).toContain('tmp: a write failed');
  });
});

describe('bridle run: approval never, a missing bwrap, bad flags', () => {
  it('--approval never asks nobody: a write inside the workspace runs; bash with --sandbox off and a .git write are refused by name (ADR 0052)', async () => {
    const model = script([
      { name: 'write_file', arguments: { path: 'new.txt', content: 'x' } },
      { name: 'edit_file', arguments: { path: 'keep.txt', old_text: 'keep', new_text: 'gone' } },
      { name: 'bash', arguments: { command: 'touch ran.txt' } },
      { name: 'write_file', arguments: { path: '.git/hooks/pre-commit', content: 'evil' } },
      { name: 'read_file', arguments: { path: 'keep.txt' } },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'never', '--sandbox', 'off', 'try'], { env: { BRIDLE_HOME: home } });
    expect(r.code).toBe(0);
    const log = readLog();
    expect(log.filter((e) => e.kind === 'tool/dispatch').map((e) => (e as EntryOf<'tool/dispatch'>).name)).toEqual(['write_file', 'edit_file', 'read_file']);
    expect(log.filter((e) => e.kind === 'approval/asked')).toHaveLength(0);
    const denied = results(log).filter((x) => x.status === 'denied');
    expect(denied.map((x) => [x.name, /, ([A-Z_]+):/.exec(x.content)?.[1]])).toEqual([['bash', 'SANDBOX_OFF'], ['write_file', 'GIT_WRITE']]);
    expect(readdirSync(ws).sort()).toEqual(['keep.txt', 'new.txt', 'planted']);
    expect(readFileSync(join(ws, 'keep.txt'), 'utf8')).toBe('gone\n');
  });

  it('a missing bwrap fails closed: the command never runs, the result says what to do', async () => {
    const model = script([{ name: 'bash', arguments: { command: 'touch ran.txt' } }]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', 'run it'], { env: { BRIDLE_HOME: home, BRIDLE_BWRAP: join(root, 'no-such-bwrap') } });
    expect(r.stderr).toMatch(/sandbox: bwrap UNAVAILABLE/);
    const [res] = results(readLog());
    expect(res).toMatchObject({ status: 'error', code: 'SANDBOX_UNAVAILABLE' });
    expect(res!.content).toMatch(/apt-get install bubblewrap.*--sandbox off/);
    expect(readdirSync(ws).sort()).toEqual(['keep.txt', 'planted']);
  });

  it('refuses bad safety flags as usage errors', async () => {
    for (const args of [['--sandbox', 'docker'], ['--sandbox-mode', 'yolo'], ['--allow', 'bash'], ['--allow', 'bash:('], ['--sandbox', 'off', '--sandbox-mode', 'full']]) {
      const r = await runCli(['run', '--model', script([]), '--cwd', ws, ...args, 'x'], { env: { BRIDLE_HOME: home } });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^bridle: /);
    }
  });
});
