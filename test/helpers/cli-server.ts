/**
 * A server the built CLI runs (`bridle serve`, `bridle mcp --http`) as a real
 * process: spawned with exactly the environment given (plus PATH and HOME),
 * resolved once it has printed where it listens (`bridle <command>: <url>`)
 * and its token, and whatever else `ready` waits for; stopped by the test
 * (`stop`: the signal, then the exit code).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI } from './cli.js';

export interface CliServer {
  proc: ChildProcessWithoutNullStreams;
  url: string;
  token: string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exit: Promise<number | null>;
  /** The stop signal, then the exit code. */
  stop(): Promise<number | null>;
}

export interface CliServerOptions {
  /** More of stdout to wait for after the URL and token (`bridle serve`'s `viewer:` line). */
  ready?: RegExp;
  /** Default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** Default 30 s: a loaded machine starts node slowly. */
  startTimeoutMs?: number;
}

/** Contract: resolves once the server listens; rejects (the process killed) when it exits or has not started in time. */
export function startCliServer(command: string, args: string[], env: NodeJS.ProcessEnv, o: CliServerOptions = {}): Promise<CliServer> {
  const proc = spawn(process.execPath, [CLI, command, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  const timeoutMs = o.startTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      proc.kill('SIGKILL');
      reject(new Error(`bridle ${command} ${why}:\n${out}\n${err}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs / 1000} s`), timeoutMs);
    void exit.then((code) => {
      clearTimeout(timer);
      fail(`exited (${code})`);
    });
    proc.stdout.on('data', (d) => {
      out += d;
      const url = new RegExp(`bridle ${command}: (\\w+://\\S+)`).exec(out)?.[1];
      const token = /^token: (.+)$/m.exec(out)?.[1];
      if (!url || !token || (o.ready && !o.ready.test(out))) return;
      clearTimeout(timer);
      const signal = o.stopSignal ?? 'SIGTERM';
      resolve({ proc, url, token: token === 'from $BRIDLE_TOKEN' ? env.BRIDLE_TOKEN! : token, stderr: () => err, exit, stop: () => (proc.kill(signal), exit) });
    });
  });
}
