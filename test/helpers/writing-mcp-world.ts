/**
 * The world of a `bridle mcp` (the built CLI, `npm run build` first) whose scripted session writes out.txt and then
 * says "Done.": a throwaway workspace and BRIDLE_HOME, the arguments and stdio command that start it there, and what
 * the session left. Written once for the e2e tests of its approvals and of the tasks extension, client and server side.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { CLI } from './cli.js';
import { type CliWorld, tempWorld } from './cli-world.js';

export interface WritingMcpWorld extends CliWorld {
  /** The script: `write_file` out.txt, then "Done.". */
  script: string;
  /** `bridle mcp`'s arguments, stdio or after `--http`: the scripted model, the workspace, no sandbox. */
  args: string[];
  /** The stdio server: node running the built CLI's `bridle mcp` with `args`, under this world's BRIDLE_HOME. */
  stdio: { command: string; args: string[]; env: Record<string, string> };
  /** out.txt in the workspace: there once the call ran. */
  file: string;
  /** The entries of the store's one session log; [] before there is one. */
  log(): Entry[];
}

/** A fresh world (its root named from `prefix`) whose session writes `content` to out.txt. */
export function writingMcpWorld(prefix: string, content = 'hello\n'): WritingMcpWorld {
  const w = tempWorld(prefix);
  const script = join(w.root, 'script.json');
  writeFileSync(script, JSON.stringify({ label: 'scripted: write a file, then say so', responses: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content } }] }, { text: 'Done.' }] }));
  const args = ['--model', `scripted:${script}`, '--cwd', w.ws, '--sandbox', 'off'];
  const log = () => {
    const dir = join(w.home, 'sessions');
    const f = existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((x) => x.endsWith('.jsonl')) : undefined;
    return f ? (parseLog(readFileSync(join(dir, f), 'utf8')).entries as Entry[]) : [];
  };
  return {
    ...w,
    script,
    args,
    stdio: { command: process.execPath, args: [CLI, 'mcp', ...args], env: { PATH: process.env.PATH!, HOME: process.env.HOME!, BRIDLE_HOME: w.home } },
    file: join(w.ws, 'out.txt'),
    log,
  };
}

/** The session's turn was cancelled by its MCP client while its approval waited: the log verifies and says so, the turn ended aborted, out.txt (`file`) was never written. */
export function expectCancelledByClient(entries: readonly Entry[], file: string): void {
  expect(verifyLog(entries).violations).toEqual([]);
  expect(entries.find((e) => e.kind === 'session/cancel')).toMatchObject({ by: 'mcp client' });
  expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
  expect(existsSync(file)).toBe(false);
}
