/**
 * `bridle serve` as a real process (the built CLI): started on a free port,
 * resolved once it has printed where it listens and its token; killed by the
 * test (`stop`: SIGINT and the exit code; or `proc.kill('SIGKILL')`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { RpcClient } from './rpc-client.js';
import { CLI } from './cli.js';

export interface ServeProcess {
  proc: ChildProcessWithoutNullStreams;
  url: string;
  token: string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exit: Promise<number | null>;
  /** SIGINT, then the exit code. */
  stop(): Promise<number | null>;
}

/** Contract: resolves once the server listens; rejects (the process killed) when it exits or has not started within 20 s. */
export function startServeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      proc.kill('SIGKILL');
      reject(new Error(`serve ${why}:\n${out}\n${err}`));
    };
    const timer = setTimeout(() => fail('did not start within 20 s'), 20_000);
    void exit.then((code) => {
      clearTimeout(timer);
      fail(`exited (${code})`);
    });
    proc.stdout.on('data', (d) => {
      out += d;
      const url = /bridle serve: (ws:\/\/\S+)/.exec(out)?.[1];
      const token = /^token: (.+)$/m.exec(out)?.[1];
      if (url && token && /^viewer: /m.test(out)) {
        clearTimeout(timer);
        resolve({
          proc,
          url,
          token: token === 'from $BRIDLE_TOKEN' ? env.BRIDLE_TOKEN! : token,
          stderr: () => err,
          exit,
          stop: () => (proc.kill('SIGINT'), exit),
        });
      }
    });
  });
}

/** The `bridle serve` processes, clients and temporary directories of a test file's tests: after each test the clients are closed, the servers SIGKILLed, the directories removed. */
export interface ServeWorld {
  servers: ServeProcess[];
  clients: RpcClient[];
  /** A new directory (its real path) removed after the test. */
  tempDir(prefix: string): string;
}

/** Contract: call once at a test file's top level; it registers its own `afterEach`. */
export function useServeWorld(): ServeWorld {
  const dirs: string[] = [];
  const world: ServeWorld = {
    servers: [],
    clients: [],
    tempDir: (prefix) => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
      dirs.push(dir);
      return dir;
    },
  };
  afterEach(() => {
    for (const c of world.clients.splice(0)) c.close();
    for (const s of world.servers.splice(0)) s.proc.kill('SIGKILL');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return world;
}
