/**
 * `bridle serve` as a real process (the built CLI): started on a free port,
 * resolved once it has printed where it listens and its token; killed by the
 * test (`stop`: SIGINT and the exit code; or `proc.kill('SIGKILL')`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
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
