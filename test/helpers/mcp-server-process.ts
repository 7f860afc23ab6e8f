/**
 * `bridle mcp --http` as a real process (the built CLI): started on a free
 * loopback port, resolved once it has printed its URL and token; stopped by
 * the test (`stop`: SIGTERM and the exit code).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI } from './cli.js';

export interface McpServerProcess {
  proc: ChildProcessWithoutNullStreams;
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  token: string;
  stderr(): string;
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** Contract: resolves once the server listens; rejects (the process killed) when it exits or has not started within 30 s. */
export function startMcpHttpProcess(args: string[], env: NodeJS.ProcessEnv): Promise<McpServerProcess> {
  const proc = spawn(process.execPath, [CLI, 'mcp', '--http', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      proc.kill('SIGKILL');
      reject(new Error(`bridle mcp ${why}:\n${out}\n${err}`));
    };
    const timer = setTimeout(() => fail('did not start within 30 s'), 30_000);
    void exit.then((code) => {
      clearTimeout(timer);
      fail(`exited (${code})`);
    });
    proc.stdout.on('data', (d) => {
      out += d;
      const url = /bridle mcp: (http:\/\/\S+)/.exec(out)?.[1];
      const token = /^token: (.+)$/m.exec(out)?.[1];
      if (!url || !token) return;
      clearTimeout(timer);
      resolve({ proc, url, token: token === 'from $BRIDLE_TOKEN' ? env.BRIDLE_TOKEN! : token, stderr: () => err, exit, stop: () => (proc.kill('SIGTERM'), exit) });
    });
  });
}
