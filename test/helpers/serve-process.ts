/**
 * `bridle serve` as a real process (the built CLI, through `cli-server.ts`):
 * started on a free port, resolved once it has printed where it listens, its
 * token and its viewer; killed by the test (`stop`: SIGINT and the exit
 * code; or `proc.kill('SIGKILL')`).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { RpcClient } from './rpc-client.js';
import { startCliServer, type CliServer } from './cli-server.js';

export type ServeProcess = CliServer;

/** Contract: resolves once the server listens; rejects (the process killed) when it exits or has not started within 30 s. */
export function startServeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  return startCliServer('serve', ['--port', '0', ...args], env, { ready: /^viewer: /m, stopSignal: 'SIGINT' });
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
